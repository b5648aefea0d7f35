/**
 * Scoring's surfaces: the CLI (`score` with a YAML file, `report` readable and --json, `export
 * --scores`, bad files and unknown scorers refused with exit 2) as real child processes over a
 * stored run, and the HTTP API (`POST /runs/:id/score`, `GET /runs/:id/report`) on a real socket.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeStoredRun } from '../../bench/stored-run.js';
import type { ScoreReport } from '../../core/scoring/report-shape.js';
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
    const exported = await runCli(['export', 'rcli', '--scores', '--out', out, '--data-dir', dataDir]);
    expect(exported.code).toBe(0);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(720);
    expect(Object.keys(lines[0]!)).toEqual(['vignette_id', 'model', 'epoch', 'scorer', 'version', 'value', 'passed', 'explanation', 'judge']);
    expect(lines.filter((l) => l.scorer === 'terse').every((l) => l.passed === false && (l.explanation as string).endsWith('more than 0'))).toBe(true);
    const exact = lines.filter((l) => l.scorer === 'exact');
    expect(exact.filter((l) => l.passed).every((l) => l.explanation === '')).toBe(true);
    expect(exact.reduce((s, l) => s + (l.value as number), 0)).toBeCloseTo(report.models.reduce((s, m) => s + m.mean * 60 * 3, 0), 6);
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
    expect(r2.stderr).toContain(`${broken}:3: not valid JSON`);
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

    expect((await api.call('GET', `/runs/${runId}/report?reducer=median`)).status).toBe(400);
    expect((await api.call('GET', `/runs/${runId}/report?scorer=nope`)).status).toBe(404);
    expect((await api.call('GET', '/runs/nope/report')).status).toBe(404);
    expect((await api.call('POST', `/runs/${runId}/score`, { body: { scorers: { scorers: [{ name: 'r', type: 'regex', pattern: '(' }] } } })).json.error.message).toContain(
      'scorers.scorers.0.pattern',
    );
  });
});
