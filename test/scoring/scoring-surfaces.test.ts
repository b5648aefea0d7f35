/**
 * Scoring's surfaces: the CLI (`score` with a YAML file, `report` readable and --json, `report
 * --against` another run, `export --format scores`, bad files and unknown scorers refused with exit 2) as
 * real child processes over stored runs, and the HTTP API (`POST /runs/:id/score`, `GET
 * /runs/:id/report`, the matrix, one vignette's scores, two runs compared) on a real socket.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeStoredRun } from '../../bench/stored-run.js';
import type { RunComparison, ScoreReport } from '../../core/scoring/report-shape.js';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeTargetManifest } from '../helpers/temp.js';
import { startApi, waitForRun, type ApiHarness } from '../http/harness.js';

const MODELS = [
  { model: 'mock-strong', accuracy: 0.8 },
  { model: 'mock-weak', accuracy: 0.6 },
];

describe('the CLI', () => {
  let tmp: ReturnType<typeof tempDir>;
  let dataDir: string;
  beforeAll(() => {
    tmp = tempDir();
    dataDir = join(tmp.dir, 'data');
    writeStoredRun(dataDir, { runId: 'rcli', vignettes: 60, epochs: 3, models: MODELS });
  });
  afterAll(() => tmp.cleanup());

  it('scores a stored run from a YAML file, reports it, and exports the scores', async () => {
    const file = join(tmp.dir, 'scorers.yaml');
    writeFileSync(file, 'scorers:\n  - name: exact\n    type: match\n  - name: terse\n    type: words\n    max: 0\n    severity: soft\n');
    const scored = await runCli(['score', 'rcli', '--scorers', file, '--data-dir', dataDir]);
    expect(scored.code).toBe(0);
    expect(scored.stdout).toMatch(/^exact \(rule, version [0-9a-f]{16}\): 360 scored\nterse \(rule, version [0-9a-f]{16}\): 360 scored\n$/);

    const json = await runCli(['report', 'rcli', '--json', '--data-dir', dataDir]);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as ScoreReport;
    expect(report).toMatchObject({ run_id: 'rcli', scorer: 'exact', kind: 'pass_fail', epochs: 3, reducer: 'mean', pending: 0 });
    expect(report.models.map((m) => [m.model, m.n])).toEqual([['mock-strong', 60], ['mock-weak', 60]]);
    expect(report.pairs).toHaveLength(1);
    expect(report.pairs[0]).toMatchObject({ a: 'mock-strong', b: 'mock-weak', n: 60, test: 'paired_t' });

    const by = JSON.parse((await runCli(['report', 'rcli', '--json', '--by', 'topic', '--scorer', 'terse', '--reducer', 'max', '--data-dir', dataDir])).stdout) as ScoreReport;
    expect(by).toMatchObject({ scorer: 'terse', by: 'topic', reducer: 'max' });
    expect(by.slices).toHaveLength(20);
    expect(by.models.every((m) => m.mean === 0)).toBe(true);

    const text = await runCli(['report', 'rcli', '--data-dir', dataDir]);
    expect(text.stdout).toContain('scorer exact');
    expect(text.stdout).toMatch(/mock-strong − mock-weak\s+60/);

    const out = join(tmp.dir, 'scores.jsonl');
    const exported = await runCli(['export', 'rcli', '--format', 'scores', '--out', out, '--data-dir', dataDir]);
    expect(exported.code).toBe(0);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(720);
    expect(Object.keys(lines[0]!)).toEqual(['vignette_id', 'model', 'epoch', 'attempt', 'scorer', 'version', 'value', 'passed', 'explanation', 'judge']);
    expect(lines.filter((l) => l.scorer === 'terse').every((l) => l.passed === false && (l.explanation as string).endsWith('more than 0'))).toBe(true);
    const exact = lines.filter((l) => l.scorer === 'exact');
    expect(exact.filter((l) => l.passed).every((l) => l.explanation === '')).toBe(true);
    expect(exact.reduce((s, l) => s + (l.value as number), 0)).toBeCloseTo(report.models.reduce((s, m) => s + m.mean * 60 * 3, 0), 6);
  });

  it('compares two runs of one manifest with report --against, B − A model by model', async () => {
    writeStoredRun(dataDir, { runId: 'rcli-b', vignettes: 60, epochs: 3, models: [{ model: 'mock-strong', accuracy: 0.6 }] });
    const file = join(tmp.dir, 'exact.json');
    writeFileSync(file, '{"scorers": [{"name": "exact", "type": "match"}]}');
    for (const run of ['rcli', 'rcli-b']) expect((await runCli(['score', run, '--scorers', file, '--data-dir', dataDir])).code).toBe(0);

    const json = await runCli(['report', 'rcli', '--against', 'rcli-b', '--scorer', 'exact', '--json', '--data-dir', dataDir]);
    expect(json.code).toBe(0);
    const c = JSON.parse(json.stdout) as RunComparison;
    expect(c).toMatchObject({ run_a: 'rcli', run_b: 'rcli-b', scorer: 'exact', reducer: 'mean' });
    expect(c.scorer_version_a).toBe(c.scorer_version_b);
    expect(c.models_b.map((m) => m.model)).toEqual(['mock-strong']);
    // Only mock-strong ran in both; every vignette is paired, so the paired diff is the difference of the means.
    expect(c.pairs.map((p) => [p.a, p.b, p.n])).toEqual([['rcli-b:mock-strong', 'rcli:mock-strong', 60]]);
    const mean = (side: RunComparison['models_a']) => side.find((m) => m.model === 'mock-strong')!.mean;
    expect(c.pairs[0]!.diff).toBeCloseTo(mean(c.models_b) - mean(c.models_a), 12);
    expect(c.pairs[0]!.diff).toBeLessThan(0);

    const text = await runCli(['report', 'rcli', '--against', 'rcli-b', '--data-dir', dataDir]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Run B rcli-b against run A rcli: scorer exact');
    expect(text.stdout).toMatch(/mock-weak\s+60\s+[\d.]+\s+\[[\d., ]+\]\s+n\/a/);
    expect(text.stdout).toMatch(/rcli-b:mock-strong − rcli:mock-strong\s+60/);

    const missing = await runCli(['report', 'rcli', '--against', 'nope', '--data-dir', dataDir]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no run "nope"');
    const sliced = await runCli(['report', 'rcli', '--against', 'rcli-b', '--by', 'topic', '--data-dir', dataDir]);
    expect(sliced.code).toBe(2);
    expect(sliced.stderr).toContain('--by does not apply');
  });

  it('refuses bad input with exit 2 and a message that names the place', async () => {
    const bad = join(tmp.dir, 'bad.json');
    writeFileSync(bad, '{"scorers": [{"name": "w", "type": "words", "min": 9, "max": 1}]}');
    const r1 = await runCli(['score', 'rcli', '--scorers', bad, '--data-dir', dataDir]);
    expect(r1.code).toBe(2);
    expect(r1.stderr).toContain(`${bad}: scorers.0.max: min is above max`);
    const broken = join(tmp.dir, 'broken.json');
    writeFileSync(broken, '{\n  "scorers": [\n    {"name": "x",}\n  ]\n}');
    const r2 = await runCli(['score', 'rcli', '--scorers', broken, '--data-dir', dataDir]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain(`${broken}:3:18: not valid JSON`);
    const r3 = await runCli(['report', 'rcli', '--scorer', 'nope', '--data-dir', dataDir]);
    expect(r3.code).toBe(2);
    expect(r3.stderr).toContain('no scorer "nope" (it has: exact, terse)');
    const r4 = await runCli(['report', 'rcli', '--reducer', 'median', '--data-dir', dataDir]);
    expect(r4.code).toBe(2);
    expect(r4.stderr).toContain('--reducer must be one of mean, majority, max');
  });
});

describe('the HTTP API', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => {
    await api.close();
  });

  it('creates a scored run, scores it again with POST /runs/:id/score, and serves GET /runs/:id/report', async () => {
    api.engine.scoring.start();
    const manifest = writeTargetManifest(api.dir, 30);
    const created = await api.call('POST', '/runs', {
      body: { manifest, models: ['mock-strong', 'mock-weak'], epochs: 2, scorers: { scorers: [{ name: 'exact', type: 'match' }] } },
    });
    expect(created.status).toBe(201);
    const runId = created.json.id as string;
    await waitForRun(api, runId);
    await api.engine.scoring.finish(runId);

    const report = await api.call('GET', `/runs/${runId}/report`);
    expect(report.status).toBe(200);
    expect(report.json).toMatchObject({ run_id: runId, scorer: 'exact', epochs: 2, pending: 0 });
    expect(report.json.models.map((m: { n: number }) => m.n)).toEqual([30, 30]);

    const scored = await api.call('POST', `/runs/${runId}/score`, { body: { scorers: [{ name: 'pick', type: 'choice' }] } });
    expect(scored.status).toBe(400);
    const again = await api.call('POST', `/runs/${runId}/score`, { body: { scorers: { scorers: [{ name: 'pick', type: 'choice' }] } } });
    expect(again.status).toBe(202);
    expect(again.json.scorers.map((s: { name: string }) => s.name)).toEqual(['exact', 'pick']);
    await api.engine.scoring.finish(runId);
    const picked = await api.call('GET', `/runs/${runId}/report?scorer=pick&by=topic&reducer=majority`);
    expect(picked.status).toBe(200);
    expect(picked.json).toMatchObject({ scorer: 'pick', by: 'topic', reducer: 'majority' });
    expect(picked.json.slices.map((s: { value: string }) => s.value).sort()).toEqual(['even', 'odd']);

    // Retries on hard fails: the report says which attempt it shows; per-run stats carry the retries apart.
    const retried = await api.call('POST', `/runs/${runId}/score`, { body: { scorers: { scorers: [{ name: 'again', type: 'match', retryOnHardFail: 2 }] } } });
    expect(retried.status).toBe(202);
    await api.engine.scoring.finish(runId);
    const first = await api.call('GET', `/runs/${runId}/report?scorer=again`);
    const final = await api.call('GET', `/runs/${runId}/report?scorer=again&attempt=final`);
    expect([first.json.attempt, final.json.attempt]).toEqual(['first', 'final']);
    expect(first.json.models).toEqual(report.json.models);
    expect(final.json.models[1].mean).toBeGreaterThan(first.json.models[1].mean);
    expect((await api.call('GET', `/runs/${runId}/report?attempt=last`)).status).toBe(400);
    const stats = await api.call('GET', `/runs/${runId}/stats`);
    expect(stats.json.retries.models.map((m: { model: string }) => m.model)).toEqual(['mock-strong', 'mock-weak']);
    expect(stats.json.retries.total_est_cost_usd).toBeGreaterThan(0);
    expect(Object.keys((await api.call('GET', '/stats')).json)).toEqual(['models', 'total_est_cost_usd']);

    expect((await api.call('GET', `/runs/${runId}/report?reducer=median`)).status).toBe(400);
    expect((await api.call('GET', `/runs/${runId}/report?scorer=nope`)).status).toBe(404);
    expect((await api.call('GET', '/runs/nope/report')).status).toBe(404);
    expect((await api.call('POST', `/runs/${runId}/score`, { body: { scorers: { scorers: [{ name: 'r', type: 'regex', pattern: '(' }] } } })).json.error.message).toContain(
      'scorers.scorers.0.pattern',
    );
  });

  it('serves the matrix, one vignette side by side, and two runs compared, as the service gives them', async () => {
    api.engine.scoring.start();
    const manifest = writeTargetManifest(api.dir, 12, 'pair.jsonl');
    const runs: string[] = [];
    for (const models of [['mock-strong', 'mock-weak'], ['mock-weak']]) {
      const created = await api.call('POST', '/runs', { body: { manifest, models, epochs: 2, scorers: { scorers: [{ name: 'exact', type: 'match' }] } } });
      expect(created.status).toBe(201);
      runs.push(created.json.id as string);
      await waitForRun(api, created.json.id as string);
      await api.engine.scoring.finish(created.json.id as string);
    }
    const [a, b] = runs as [string, string];
    const service = api.engine.service;

    const matrix = await api.call('GET', `/runs/${a}/scores/matrix?sort=flip_rate&limit=5&cursor=5&reducer=max`);
    expect(matrix.status).toBe(200);
    expect(matrix.json).toEqual(await service.scoreMatrix({ runId: a, sort: 'flip_rate', limit: 5, cursor: 5, reducer: 'max' }));
    expect(matrix.json).toMatchObject({ total: 12, nextCursor: 10, sort: 'flip_rate', reducer: 'max', models: ['mock-strong', 'mock-weak'] });
    expect(matrix.json.rows).toHaveLength(5);
    const bad = await api.call('GET', `/runs/${a}/scores/matrix?limit=0`);
    expect(bad.status).toBe(400);
    expect(bad.json.error.where).toBe('limit');
    expect((await api.call('GET', `/runs/${a}/scores/matrix?sort=random`)).status).toBe(400);
    expect((await api.call('GET', `/runs/${a}/scores/matrix?scorer=nope`)).status).toBe(404);

    const detail = await api.call('GET', `/runs/${a}/scores/vignettes/q3`);
    expect(detail.status).toBe(200);
    expect(detail.json).toEqual(await service.scoreDetail({ runId: a, vignetteId: 'q3' }));
    expect(detail.json.responses).toHaveLength(4);
    expect((await api.call('GET', `/runs/${a}/scores/vignettes/${encodeURIComponent('no such/id')}`)).status).toBe(404);

    const compared = await api.call('GET', `/runs/${a}/compare/${b}?scorer=exact&reducer=majority`);
    expect(compared.status).toBe(200);
    expect(compared.json).toEqual(await service.compareRuns({ runA: a, runB: b, scorer: 'exact', reducer: 'majority' }));
    expect(compared.json.pairs.map((p: { a: string; b: string; n: number }) => [p.a, p.b, p.n])).toEqual([[`${b}:mock-weak`, `${a}:mock-weak`, 12]]);
    expect((await api.call('GET', `/runs/${a}/compare/nope`)).status).toBe(404);
    expect((await api.call('GET', `/runs/${a}/compare/${b}?reducer=median`)).status).toBe(400);
  });
});
