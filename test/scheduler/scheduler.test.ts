import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ControlEvent } from '../../core/service/contract.js';
import { openEngine, type Engine } from '../../core/service/engine.js';
import { planJobs } from '../../core/scheduler/plan-jobs.js';
import { initTelemetry } from '../../core/telemetry.js';
import { tempDir, writeManifest, writeMockCatalog } from '../helpers/temp.js';
import { expectExactlyOnce } from '../helpers/verify.js';

initTelemetry({ defaultLevel: 'silent' });

describe('scheduler', () => {
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine;
  let dataDir: string;
  let catalog: string;
  beforeEach(() => {
    tmp = tempDir();
    dataDir = join(tmp.dir, 'data');
    catalog = writeMockCatalog(tmp.dir, {
      fast: { latencyMs: 0 },
      slowish: { latencyMs: 5, jitterMs: 3 },
      flaky: { latencyMs: 1, errorRate: 0.15, errorKind: 'rate_limit', retryAfterMs: 1 },
      flaky500: { latencyMs: 1, errorRate: 0.15, errorKind: 'server_error' },
      broken: { latencyMs: 1, errorRate: 1, errorKind: 'bad_request' },
      sluggish: { latencyMs: 200 },
    });
  });
  afterEach(async () => {
    await engine?.close();
    tmp.cleanup();
  });

  const open = (extra: Partial<Parameters<typeof openEngine>[0]> = {}) => {
    engine = openEngine({ dataDir, catalogPaths: [catalog], tickMs: 20, ...extra });
    return engine;
  };

  it('plans one job per model and epoch, epochs from 1', () => {
    expect(planJobs({ models: ['a', 'b'], epochs: 2 })).toEqual([
      { model: 'a', epoch: 1 },
      { model: 'a', epoch: 2 },
      { model: 'b', epoch: 1 },
      { model: 'b', epoch: 2 },
    ]);
  });

  it('drives a run from queued to done with exactly one record per (model, epoch, vignette)', async () => {
    open();
    const manifest = writeManifest(tmp.dir, 50);
    const run = await engine.service.createRun({ manifestPath: manifest, models: ['fast', 'slowish'], epochs: 3 });
    expect(run).toMatchObject({ status: 'queued', jobCount: 6, doneCount: 0, vignetteCount: 50 });
    const final = await engine.scheduler.runToCompletion(run.id);
    expect(final).toMatchObject({ status: 'done', doneCount: 6, failedCount: 0, error: null });
    expectExactlyOnce(engine.store, dataDir, run.id);
    const usage = engine.store.queries.usageByModel(run.id);
    expect(usage.map((u) => [u.model, u.calls])).toEqual([
      ['fast', 150],
      ['slowish', 150],
    ]);
    const detail = await engine.service.getRun({ runId: run.id });
    expect(detail.jobs.every((j) => j.status === 'done' && j.vignettesDone === 50 && j.attempt === 1)).toBe(true);
  });

  it('the ticking scheduler takes up queued runs by itself', async () => {
    open();
    engine.scheduler.start();
    const manifest = writeManifest(tmp.dir, 10);
    const a = await engine.service.createRun({ manifestPath: manifest, models: ['fast'], epochs: 2 });
    const b = await engine.service.createRun({ manifestPath: manifest, models: ['fast'], epochs: 1 });
    await engine.scheduler.finishAll();
    expect(engine.store.queries.getRun(a.id)!.status).toBe('done');
    expect(engine.store.queries.getRun(b.id)!.status).toBe('done');
  });

  it('retries retryable failures until every vignette has a record', async () => {
    open();
    const manifest = writeManifest(tmp.dir, 40);
    const run = await engine.service.createRun({ manifestPath: manifest, models: ['flaky', 'flaky500'], epochs: 2 });
    const final = await engine.scheduler.runToCompletion(run.id);
    expect(final.status).toBe('done');
    expectExactlyOnce(engine.store, dataDir, run.id);
  });

  it('fails a job on a permanent error and says which jobs failed', async () => {
    open();
    const manifest = writeManifest(tmp.dir, 5);
    const run = await engine.service.createRun({ manifestPath: manifest, models: ['fast', 'broken'], epochs: 2 });
    const final = await engine.scheduler.runToCompletion(run.id);
    expect(final).toMatchObject({ status: 'failed', doneCount: 2, failedCount: 2 });
    // Each vignette of the broken model was given up on (a 400 is not retried) and is listed.
    expect(final.error).toMatch(/^2 of 4 jobs failed; 10 vignettes failed: v0 \(broken@1\): .*400 Bad Request.*; v1 \(broken@1\)/);
    expect(engine.store.queries.vignetteFailures(run.id).map((f) => f.attempts)).toEqual(Array(10).fill(1));
    const jobs = engine.store.queries.jobs(run.id);
    expect(jobs.filter((j) => j.model === 'broken').every((j) => j.status === 'failed' && j.attempt === 1)).toBe(true);
    // A run's usage lists every model of the run, a failed one with nothing landed too.
    expect(engine.store.queries.usageByModel(run.id).map((u) => [u.model, u.calls])).toEqual([
      ['broken', 0],
      ['fast', 10],
    ]);
  });

  it('cancels a running run: its jobs stop and it ends cancelled', async () => {
    open();
    const manifest = writeManifest(tmp.dir, 40);
    const run = await engine.service.createRun({ manifestPath: manifest, models: ['sluggish'], epochs: 4, concurrency: 1 });
    const done = engine.scheduler.runToCompletion(run.id);
    await new Promise((r) => setTimeout(r, 300));
    await engine.service.cancelRun({ runId: run.id });
    const final = await done;
    expect(final.status).toBe('cancelled');
    expect(engine.store.queries.jobs(run.id).every((j) => j.status === 'cancelled' || j.status === 'done')).toBe(true);
  });

  it('coalesces events to about ten a second per run, whatever the record rate', async () => {
    open();
    const events: ControlEvent[] = [];
    engine.service.subscribe((event) => events.push(event));
    const manifest = writeManifest(tmp.dir, 3000);
    const run = await engine.service.createRun({ manifestPath: manifest, models: ['fast', 'slowish'], epochs: 1 });
    const started = Date.now();
    await engine.scheduler.runToCompletion(run.id);
    engine.events.flush();
    const elapsed = (Date.now() - started) / 1000;
    const runEvents = events.filter((e) => e.type === 'run' && e.run.id === run.id);
    // ~10 a second, plus the one flush at the end.
    expect(runEvents.length).toBeLessThanOrEqual(Math.ceil(elapsed * 10) + 2);
    expect(runEvents.length).toBeGreaterThan(1);
    const last = runEvents.at(-1)!;
    expect(last.type === 'run' && last.run.status).toBe('done');
    expect(last.type === 'run' && last.run.calls).toBe(6000);
    // The spacing of consecutive events is the hub's own property, tested on a fake clock in
    // test/service/event-hub.test.ts; here the count bound is what a real run must keep.
  });

  it('a stopped scheduler hands its run back, and a new one finishes it without re-posing landed vignettes', async () => {
    open();
    const manifest = writeManifest(tmp.dir, 30);
    const run = await engine.service.createRun({ manifestPath: manifest, models: ['sluggish'], epochs: 2, concurrency: 2 });
    const first = engine.scheduler.runToCompletion(run.id);
    await new Promise((r) => setTimeout(r, 700));
    await engine.scheduler.stop();
    await first;
    expect(engine.store.queries.getRun(run.id)!.status).toBe('queued');
    const landedBefore = engine.store.queries.responseCount(run.id);
    expect(landedBefore).toBeGreaterThan(0);
    const seqBefore = new Map(engine.store.queries.runResults(run.id).map((r) => [`${r.epoch}|${r.vignetteId}`, r.seq]));
    await engine.close();

    open();
    const final = await engine.scheduler.runToCompletion(run.id);
    expect(final.status).toBe('done');
    expectExactlyOnce(engine.store, dataDir, run.id);
    // Records that had landed are the very same rows: nothing was posed twice.
    for (const r of engine.store.queries.runResults(run.id)) {
      const before = seqBefore.get(`${r.epoch}|${r.vignetteId}`);
      if (before !== undefined) expect(r.seq).toBe(before);
    }
  });
  it('says which key is missing when a hosted model has none', async () => {
    delete process.env.PANOPTES_TEST_MISSING_KEY;
    const hosted = join(tmp.dir, 'hosted.json');
    writeFileSync(
      hosted,
      JSON.stringify({
        providers: { acme: { kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'PANOPTES_TEST_MISSING_KEY', trainsOnData: false } },
        models: { 'acme-1': { hosts: [{ provider: 'acme', model: 'acme-1', contextWindow: 8000 }] } },
      }),
    );
    open({ catalogPaths: [catalog, hosted] });
    const run = await engine.service.createRun({ manifestPath: writeManifest(tmp.dir, 3), models: ['acme-1'], epochs: 1 });
    const final = await engine.scheduler.runToCompletion(run.id);
    expect(final.status).toBe('failed');
    expect(final.error).toContain('model "acme-1" needs an API key: set PANOPTES_TEST_MISSING_KEY (no live worker serves it either)');
  });
});
