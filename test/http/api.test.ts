import { request as httpRequest } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { initTelemetry } from '../../core/telemetry.js';
import { writeManifest } from '../helpers/temp.js';
import { expectExactlyOnce } from '../helpers/verify.js';
import { TOKEN, startApi, waitForRun, type ApiHarness } from './harness.js';

initTelemetry({ defaultLevel: 'silent' });

const RUN_OPTIONS = { concurrency: 4, sampling: {}, privacy: 'strict' as const, skipPromptCache: false, shareCacheAcrossEpochs: false };

describe('HTTP API', () => {
  let api: ApiHarness;
  afterEach(async () => {
    await api?.close();
  });

  it('stats_reports_tokens_and_cost_per_model (the /stats accounting)', async () => {
    api = await startApi({ startScheduler: false });
    const { store } = api.engine;
    // Seed the store directly: one running run, one job, one record of 1,000,000 tokens each way.
    store.runs.insertRun({ id: 'r-seed', manifestPath: '/seed.jsonl', models: ['claude'], epochs: 1, vignetteCount: 1, options: RUN_OPTIONS });
    const [job] = store.jobs.insertJobs('r-seed', [{ model: 'claude', epoch: 1 }]);
    const attempt = store.jobs.startAttempt(job!.id, 'w1')!;
    const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000 };
    const landed = store.records.settle({ jobId: job!.id, attempt, workerId: 'w1', vignettesDone: 1, usage }, [
      {
        runId: 'r-seed', jobId: job!.id, vignetteId: 'v1', vignetteIndex: 0, model: 'claude', epoch: 1,
        prompt: 'p', response: 'r', usage, latencyMs: 1, host: 'seed/claude', cached: false, sampling: {}, finishedAt: Date.now(),
      },
    ]);
    expect(landed.landed).toBe(true);

    const res = await api.call('GET', '/stats');
    expect(res.status).toBe(200);
    expect(res.json.models[0].model).toBe('claude');
    expect(res.json.models[0].input_tokens).toBe(1_000_000);
    expect(res.json.total_est_cost_usd).toBe(18.0);
    // Exactly the /stats shape and nothing more.
    expect(res.json).toEqual({
      models: [{ model: 'claude', input_tokens: 1_000_000, output_tokens: 1_000_000, calls: 1, est_cost_usd: 18 }],
      total_est_cost_usd: 18,
    });
  });

  it('refuses each bad POST /runs with a 400 naming the field, and stores nothing', async () => {
    api = await startApi();
    const manifest = writeManifest(api.dir, 5);
    const broken = join(api.dir, 'broken.jsonl');
    writeFileSync(broken, ['{"id":"a","prompt":"one"}', '{"id":"b","prompt":"two"}', '{"id":"c" "prompt":"three"}', ''].join('\n'));

    const cases: Array<{ body: unknown; where: RegExp; message: RegExp }> = [
      { body: { manifest, models: [], epochs: 1 }, where: /^models$/, message: /at least one model/ },
      { body: { manifest, epochs: 1 }, where: /^models$/, message: /models/ },
      { body: { manifest, models: ['fast'], epochs: 0 }, where: /^epochs$/, message: /at least 1/ },
      { body: { manifest, models: ['fast'], epochs: 1.5 }, where: /^epochs$/, message: /whole number/ },
      { body: { manifest, models: ['nope'], epochs: 1 }, where: /^models\[0\]$/, message: /unknown model "nope"/ },
      { body: { models: ['fast'], epochs: 1 }, where: /^manifest$/, message: /manifest/ },
      { body: { manifest: join(api.dir, 'missing.jsonl'), models: ['fast'], epochs: 1 }, where: /missing\.jsonl$/, message: /cannot read manifest/ },
      { body: { manifest: broken, models: ['fast'], epochs: 1 }, where: /broken\.jsonl:3$/, message: /broken\.jsonl:3: invalid JSON/ },
      { body: { manifest, models: ['fast'], epochs: 1, surprise: true }, where: /^body$/, message: /surprise/ },
      // The cache option's former name is refused, not ignored: ignoring it would quietly use the cache.
      { body: { manifest, models: ['fast'], epochs: 1, noStore: true }, where: /^body$/, message: /noStore/ },
    ];
    for (const c of cases) {
      const res = await api.call('POST', '/runs', { body: c.body });
      expect(res.status, JSON.stringify(c.body)).toBe(400);
      expect(res.json.error.code).toMatch(/^(invalid_input|manifest_invalid)$/);
      expect(res.json.error.where).toMatch(c.where);
      expect(res.json.error.message).toMatch(c.message);
    }
    const malformed = await api.call('POST', '/runs', { body: '{"manifest": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.json.error.code).toBe('bad_request');

    expect((await api.call('GET', '/runs')).json.runs).toEqual([]);
    const db = api.engine.store.db;
    expect(db.prepare('SELECT COUNT(*) AS n FROM vignettes').get()).toEqual({ n: 0 });
    expect(db.prepare('SELECT COUNT(*) AS n FROM staged_runs').get()).toEqual({ n: 0 });
  });

  it('creates a queued run (201), the scheduler completes it, and /stats reflects it', async () => {
    api = await startApi();
    const manifest = writeManifest(api.dir, 20);
    const created = await api.call('POST', '/runs', { body: { manifest, models: ['fast', 'steady', 'flaky'], epochs: 2, concurrency: 3 } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ status: 'queued', jobCount: 6, vignetteCount: 20, doneCount: 0 });
    expect(created.headers.location).toBe(`/runs/${created.json.id}`);

    const finished = await waitForRun(api, created.json.id);
    expect(finished.json.run).toMatchObject({ status: 'done', doneCount: 6, failedCount: 0, calls: 120 });
    expect(finished.json.jobs).toHaveLength(6);
    expect(finished.json.jobs.every((j: { status: string }) => j.status === 'done')).toBe(true);

    const stats = await api.call('GET', '/stats');
    expect(stats.status).toBe(200);
    expect(stats.json.models.map((m: { model: string; calls: number }) => [m.model, m.calls])).toEqual([
      ['fast', 40],
      ['flaky', 40],
      ['steady', 40],
    ]);
    const usage = api.engine.store.queries.usageByModel();
    for (const m of stats.json.models) {
      const u = usage.find((x) => x.model === m.model)!;
      expect(m).toMatchObject({ input_tokens: u.inputTokens, output_tokens: u.outputTokens });
      expect(m.input_tokens).toBeGreaterThan(0);
    }
    const total = stats.json.models.reduce((s: number, m: { est_cost_usd: number }) => s + m.est_cost_usd, 0);
    expect(stats.json.total_est_cost_usd).toBeCloseTo(total, 12);

    const runStats = await api.call('GET', `/runs/${created.json.id}/stats`);
    expect(runStats.json).toMatchObject({ run_id: created.json.id, status: 'done', calls: 120, calls_expected: 120, job_count: 6 });
    // The mock models bill nobody: the sweep's ledger counts no call of theirs.
    expect(runStats.json).toMatchObject({ calls_asked: 0, calls_unrecorded: 0 });
    expect(runStats.json.jobs).toMatchObject({ done: 6, failed: 0, pending: 0, running: 0 });
    expect(runStats.json.models.map((m: { model: string; jobs_done: number }) => [m.model, m.jobs_done])).toEqual([
      ['fast', 2],
      ['flaky', 2],
      ['steady', 2],
    ]);
    expect(runStats.json.total_est_cost_usd).toBeCloseTo(stats.json.total_est_cost_usd, 12);

    const listed = await api.call('GET', '/runs?status=done&limit=10');
    expect(listed.json.runs.map((r: { id: string }) => r.id)).toEqual([created.json.id]);
  });

  it('pages responses with filters and a cursor, and exports exactly one line per (model, epoch, vignette)', async () => {
    api = await startApi();
    const manifest = writeManifest(api.dir, 30);
    const created = await api.call('POST', '/runs', { body: { manifest, models: ['fast', 'steady'], epochs: 3 } });
    const runId = created.json.id as string;
    await waitForRun(api, runId);

    const seen: string[] = [];
    let cursor: number | null = 0;
    for (let pages = 0; cursor !== null; pages++) {
      expect(pages).toBeLessThan(10);
      const page = await api.call('GET', `/runs/${runId}/responses?model=steady&epoch=2&limit=7&cursor=${cursor}`);
      expect(page.status).toBe(200);
      for (const item of page.json.items) {
        expect(item).toMatchObject({ model: 'steady', epoch: 2, runId });
        seen.push(item.vignetteId);
      }
      cursor = page.json.nextCursor;
    }
    expect(seen).toHaveLength(30);
    expect(new Set(seen).size).toBe(30);

    const bad = await api.call('GET', `/runs/${runId}/responses?epoch=zero`);
    expect(bad.status).toBe(400);
    expect(bad.json.error.where).toBe('epoch');
    const tooMany = await api.call('GET', `/runs/${runId}/responses?limit=5000`);
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.error.where).toBe('limit');

    const exported = await api.call('GET', `/runs/${runId}/responses.jsonl`);
    expect(exported.status).toBe(200);
    expect(exported.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = exported.text.trimEnd().split('\n').map((l) => JSON.parse(l) as { model: string; epoch: number; vignette_id: string });
    const keys = lines.map((l) => `${l.model}|${l.epoch}|${l.vignette_id}`);
    expect(keys).toHaveLength(2 * 3 * 30);
    expect(new Set(keys).size).toBe(2 * 3 * 30);
    expectExactlyOnce(api.engine.store, api.dataDir, runId);
  });

  it('keeps the store writable while a slow client holds a streamed export open', async () => {
    api = await startApi();
    const manifest = writeManifest(api.dir, 1000);
    const created = await api.call('POST', '/runs', { body: { manifest, models: ['fast', 'steady'], epochs: 2 } });
    await waitForRun(api, created.json.id);

    // Read the first bytes of an export of 4,000 lines, then stop reading: the server must wait on us.
    const stalled = await new Promise<{ destroy: () => void }>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: api.port, path: `/runs/${created.json.id}/responses.jsonl`, headers: { authorization: `Bearer ${TOKEN}` } },
        (res) => {
          res.once('data', () => {
            res.pause();
            resolve({ destroy: () => req.destroy() });
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
    try {
      await new Promise((r) => setTimeout(r, 100));
      // Meanwhile another run is created (a write) and driven to the end by the scheduler (more writes).
      const second = await api.call('POST', '/runs', { body: { manifest, models: ['fast'], epochs: 1 } });
      expect(second.status).toBe(201);
      const done = await waitForRun(api, second.json.id);
      expect(done.json.run.status).toBe('done');
    } finally {
      stalled.destroy();
    }
  });

  it('cancels a queued run (200, idempotent), refuses to cancel a finished one (409), and answers 404 for unknowns', async () => {
    api = await startApi({ startScheduler: false });
    const manifest = writeManifest(api.dir, 3);
    const created = await api.call('POST', '/runs', { body: { manifest, models: ['fast'], epochs: 1 } });
    const cancel = await api.call('POST', `/runs/${created.json.id}/cancel`);
    expect(cancel.status).toBe(200);
    expect(cancel.json.status).toBe('cancelled');
    const again = await api.call('POST', `/runs/${created.json.id}/cancel`);
    expect(again.status).toBe(200);
    expect(again.json.status).toBe('cancelled');

    api.engine.scheduler.start();
    const finished = await api.call('POST', '/runs', { body: { manifest, models: ['fast'], epochs: 1 } });
    await waitForRun(api, finished.json.id);
    const late = await api.call('POST', `/runs/${finished.json.id}/cancel`);
    expect(late.status).toBe(409);
    expect(late.json.error).toMatchObject({ code: 'conflict', where: 'runId' });
    expect(late.json.error.message).toMatch(/is done already/);

    for (const path of ['/runs/nope', '/runs/nope/stats', '/runs/nope/responses', '/runs/nope/responses.jsonl']) {
      const res = await api.call('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.json.error).toMatchObject({ code: 'not_found', where: 'runId' });
    }
    expect((await api.call('POST', '/runs/nope/cancel')).status).toBe(404);
    const noRoute = await api.call('GET', '/nowhere');
    expect(noRoute.status).toBe(404);
    expect(noRoute.json.error.code).toBe('not_found');
  });

  it('serves the router metrics, filtered by model, with query numbers checked like the contract', async () => {
    api = await startApi();
    const manifest = writeManifest(api.dir, 20);
    const created = await api.call('POST', '/runs', { body: { manifest, models: ['fast', 'flaky'], epochs: 1 } });
    await waitForRun(api, created.json.id);

    const all = await api.call('GET', '/metrics');
    expect(all.status).toBe(200);
    const hosts = Object.fromEntries(all.json.hosts.map((h: { host: string; calls: number }) => [h.host, h]));
    expect(hosts['mocktest/fast']).toMatchObject({ provider: 'mocktest', calls: 20 });
    // Every flaky call that failed was retried until it succeeded: 20 successes, plus its failures.
    const flaky = hosts['mocktest/flaky'];
    const flakyErrors = Object.values(flaky.errors as Record<string, number>).reduce((a, b) => a + b, 0);
    expect(flaky.calls).toBe(20 + flakyErrors);

    const filtered = await api.call('GET', '/metrics?model=flaky&limit=5');
    expect(filtered.status).toBe(200);
    expect(filtered.json.recent).toHaveLength(5);
    expect(filtered.json.recent.every((c: { model: string }) => c.model === 'flaky')).toBe(true);
    expect(filtered.json.hosts.map((h: { host: string }) => h.host)).toEqual(['mocktest/flaky']);

    const bad = await api.call('GET', '/metrics?limit=lots');
    expect(bad.status).toBe(400);
    expect(bad.json.error.where).toBe('limit');
  });

  it('answers /health without a token, with the version and the router posture', async () => {
    api = await startApi({ startScheduler: false });
    const res = await api.call('GET', '/health', { headers: { authorization: '' } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: 'ok' });
    expect(res.json.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Array.isArray(res.json.posture.models)).toBe(true);
    expect(res.json.posture.models.map((m: { model: string }) => m.model)).toContain('fast');
  });
});
