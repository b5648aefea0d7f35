import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../core/store/store.js';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeManifest, writeMockCatalog } from '../helpers/temp.js';
import { expectExactlyOnce } from '../helpers/verify.js';

describe('panoptes CLI', () => {
  let tmp: ReturnType<typeof tempDir>;
  let dataDir: string;
  let catalog: string;
  let manifest: string;
  beforeAll(() => {
    tmp = tempDir();
    dataDir = join(tmp.dir, 'data');
    catalog = writeMockCatalog(tmp.dir, { a: { latencyMs: 1 }, b: { latencyMs: 2 }, broken: { errorRate: 1, errorKind: 'auth' } });
    manifest = writeManifest(tmp.dir, 12);
  });
  afterAll(() => tmp.cleanup());

  const common = () => ['--data-dir', dataDir, '--catalog', catalog];

  it('run --json prints one summary object and exits 0 when done', async () => {
    const res = await runCli(['run', '--manifest', manifest, '--models', 'a,b', '--epochs', '2', '--json', ...common()]);
    expect(res.code).toBe(0);
    const summary = JSON.parse(res.stdout) as Record<string, unknown> & { models: Array<Record<string, unknown>> };
    expect(summary).toMatchObject({ status: 'done', job_count: 4, done_count: 4, failed_count: 0 });
    expect(summary.responses_path).toBe(join(dataDir, 'runs', String(summary.run_id), 'responses.jsonl'));
    expect(summary.models.map((m) => [m.model, m.calls])).toEqual([
      ['a', 24],
      ['b', 24],
    ]);
    const store = new Store(join(dataDir, 'panoptes.db'));
    expectExactlyOnce(store, dataDir, String(summary.run_id));
    store.close();

    const out = join(tmp.dir, 'export.jsonl');
    const exp = await runCli(['export', String(summary.run_id), '--out', out, ...common()]);
    expect(exp.code).toBe(0);
    expect(exp.stdout).toContain('wrote 48 lines');
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { model: string; epoch: number; vignette_id: string });
    expect(new Set(lines.map((l) => `${l.model}|${l.epoch}|${l.vignette_id}`)).size).toBe(48);

    const csv = join(tmp.dir, 'export.csv');
    expect((await runCli(['export', String(summary.run_id), '--out', csv, '--format', 'csv', ...common()])).code).toBe(0);
    expect(readFileSync(csv, 'utf8').split('\n')[0]).toMatch(/^run_id,vignette_id,model,epoch,prompt,response/);

    const stats = await runCli(['stats', '--json', ...common()]);
    const report = JSON.parse(stats.stdout) as { models: Array<{ model: string; calls: number; input_tokens: number; est_cost_usd: number }>; total_est_cost_usd: number };
    expect(Object.keys(report).sort()).toEqual(['models', 'total_est_cost_usd']);
    expect(report.models.map((m) => m.model)).toEqual(['a', 'b']);
    expect(report.total_est_cost_usd).toBeCloseTo(report.models.reduce((s, m) => s + m.est_cost_usd, 0));
  });

  it('prints a per-model table for people', async () => {
    const res = await runCli(['run', '--manifest', manifest, '--models', 'a', '--epochs', '1', ...common()]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/run r\w+: done \(1\/1 jobs, 0 failed\)/);
    // The first test already asked "a" these questions at epoch 1: every answer comes from the cache, and the table says so.
    expect(res.stdout).toMatch(/^model\s+calls\s+input tokens\s+output tokens\s+est\. cost\s+from cache\s+cached tokens\s+saved$/m);
    expect(res.stdout).toMatch(/^a\s+12\s+0\s+0\s+\$0\.00\s+12\s/m);
    expect(res.stdout).toMatch(/^responses: .*responses\.jsonl$/m);
  });

  it('exits 1 with the reason when jobs fail', async () => {
    const res = await runCli(['run', '--manifest', manifest, '--models', 'a,broken', '--json', ...common()]);
    expect(res.code).toBe(1);
    const summary = JSON.parse(res.stdout) as { status: string; error: string };
    expect(summary.status).toBe('failed');
    expect(summary.error).toMatch(/1 of 2 jobs failed: broken@1: .*401/);
  });

  it('exits 2 naming the file and line of a bad manifest, creating nothing', async () => {
    const bad = join(tmp.dir, 'bad.jsonl');
    writeFileSync(bad, '{"id":"x","prompt":"ok"}\n{"id":"x","prompt":"again"}\n');
    const fresh = join(tmp.dir, 'fresh');
    const res = await runCli(['run', '--manifest', bad, '--models', 'a', '--data-dir', fresh, '--catalog', catalog]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`${bad}:2: duplicate id "x" (first on line 1)`);
    const runs = await runCli(['runs', '--json', '--data-dir', fresh, '--catalog', catalog]);
    expect(JSON.parse(runs.stdout)).toEqual([]);
  });

  it('exits 2 on an unknown model or bad epochs', async () => {
    const res = await runCli(['run', '--manifest', manifest, '--models', 'nope', ...common()]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/models\[0\]: unknown model "nope"/);
    const res2 = await runCli(['run', '--manifest', manifest, '--models', 'a', '--epochs', '0', ...common()]);
    expect(res2.code).toBe(2);
    expect(res2.stderr).toMatch(/--epochs must be a whole number >= 1/);
  });
  it('passes run options through: --skip-prompt-cache, --privacy, sampling', async () => {
    const res = await runCli(['run', '--manifest', manifest, '--models', 'a', '--skip-prompt-cache', '--privacy', 'fallback', '--temperature', '0.2', '--seed', '7', '--json', ...common()]);
    expect(res.code).toBe(0);
    const runId = (JSON.parse(res.stdout) as { run_id: string }).run_id;
    const runs = JSON.parse((await runCli(['runs', '--json', ...common()])).stdout) as Array<{ id: string; options: Record<string, unknown> }>;
    expect(runs.find((r) => r.id === runId)!.options).toMatchObject({ skipPromptCache: true, privacy: 'fallback', sampling: { temperature: 0.2, seed: 7 } });
  });
});
