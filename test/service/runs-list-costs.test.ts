/**
 * The runs list's cost in all: a run scored by a judge and by a rule that retries hard fails
 * lists its sweep's cost unchanged, its judges' and retries' apart, and their sum, the same
 * figures `stats` gives, through the contract, `GET /runs`, and `panoptes runs` (a real child
 * process reading the database read-only, which prices the judge at its catalog price, not a
 * fallback). Mock models on a real engine, real SQLite, a real socket.
 * Runs on: Node (tests).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary, StatsReport } from '../../core/service/contract.js';
import { formatUsd } from '../../core/common/money.js';
import { runCli } from '../helpers/cli.js';
import { writeTargetManifest } from '../helpers/temp.js';
import { startApi, waitForRun, type ApiHarness } from '../http/harness.js';

describe('the runs list with scoring costs', () => {
  let api: ApiHarness;
  let runId: string;
  let stats: StatsReport;
  let listed: RunSummary;

  beforeAll(async () => {
    api = await startApi();
    api.engine.scoring.start();
    const run = await api.engine.service.createRun({
      manifestPath: writeTargetManifest(api.dir, 12),
      models: ['mock-strong', 'mock-weak'],
      epochs: 2,
      scorers: {
        scorers: [
          { name: 'exact', type: 'match', retryOnHardFail: 1 },
          { name: 'judged', type: 'judge', judges: ['mock-judge'], rubric: 'Is the answer the right option?' },
        ],
      },
    });
    runId = run.id;
    await waitForRun(api, runId);
    await api.engine.scoring.finish(runId);
    stats = await api.engine.service.stats({ runId });
    listed = (await api.engine.service.listRuns())[0]!;
  });
  afterAll(async () => api.close());

  it('lists the judges and retries apart and in the total, as stats has them', () => {
    expect(listed!.id).toBe(runId);
    const tokens = api.engine.store.db
      .prepare(`SELECT SUM(input_tokens) AS inp, SUM(output_tokens) AS out FROM judge_usage WHERE run_id = ?`)
      .get(runId) as { inp: number; out: number };
    // mock-judge's catalog price: $0.50 / $1.50 per million tokens.
    expect(listed!.judgeCostUsd).toBeGreaterThan(0);
    expect(listed!.judgeCostUsd).toBeCloseTo((tokens.inp * 0.5 + tokens.out * 1.5) / 1e6, 12);
    expect(listed!.retryCostUsd, 'mock-weak misses: some records are retried').toBeGreaterThan(0);
    expect(listed!.retryCostUsd).toBeCloseTo(stats.totalRetryCostUsd, 12);
    expect(listed!.estCostUsd).toBeCloseTo(stats.totalEstCostUsd, 12);
    expect(listed!.totalWithScoringUsd).toBeCloseTo(stats.totalWithScoringUsd, 12);
    expect(listed!.totalWithScoringUsd).toBeCloseTo(listed!.estCostUsd + listed!.judgeCostUsd + listed!.retryCostUsd, 12);
  });

  it('serves the same figures over GET /runs and GET /runs/:id', async () => {
    const list = await api.call('GET', '/runs');
    expect(list.status).toBe(200);
    const [run] = list.json.runs as RunSummary[];
    expect(run).toMatchObject({ id: runId, estCostUsd: listed!.estCostUsd, judgeCostUsd: listed!.judgeCostUsd, retryCostUsd: listed!.retryCostUsd, totalWithScoringUsd: listed!.totalWithScoringUsd });
    const one = await api.call('GET', `/runs/${runId}`);
    expect(one.json.run.totalWithScoringUsd).toBe(listed!.totalWithScoringUsd);
  });

  it('reads each run its own sums when the list holds several (one read for them all)', async () => {
    const plain = await api.engine.service.createRun({ manifestPath: writeTargetManifest(api.dir, 3, 'plain.jsonl'), models: ['mock-strong'], epochs: 1 });
    await waitForRun(api, plain.id);
    const runs = await api.engine.service.listRuns();
    expect(runs.map((r) => r.id)).toEqual([plain.id, runId]);
    expect(runs[0]).toMatchObject({ judgeCostUsd: 0, retryCostUsd: 0, totalWithScoringUsd: runs[0]!.estCostUsd });
    expect(runs[1]).toMatchObject({ judgeCostUsd: listed.judgeCostUsd, retryCostUsd: listed.retryCostUsd, totalWithScoringUsd: listed.totalWithScoringUsd });
    // One run's line, as a pushed event carries it, is the list's.
    expect((await api.engine.service.getRun({ runId })).run).toMatchObject({ totalWithScoringUsd: listed.totalWithScoringUsd });
    await api.engine.service.deleteRun({ runId: plain.id });
  });

  it('prints them from `panoptes runs` and `panoptes stats`, a child reading the database', async () => {
    const json = await runCli(['runs', '--json', '--data-dir', api.dataDir]);
    expect(json.code, json.stderr).toBe(0);
    const [run] = JSON.parse(json.stdout) as RunSummary[];
    expect(run!.judgeCostUsd).toBeCloseTo(listed!.judgeCostUsd, 12);
    expect(run!.retryCostUsd).toBeCloseTo(listed!.retryCostUsd, 12);
    expect(run!.totalWithScoringUsd).toBeCloseTo(listed!.totalWithScoringUsd, 12);
    const read = await runCli(['stats', '--run', runId, '--data-dir', api.dataDir]);
    expect(read.stdout).toContain(
      `in all: ${formatUsd(stats.totalWithScoringUsd)} (sweep ${formatUsd(stats.totalEstCostUsd)} + judges ${formatUsd(stats.totalJudgeCostUsd)} + retries ${formatUsd(stats.totalRetryCostUsd)})`,
    );

    const table = await runCli(['runs', '--data-dir', api.dataDir]);
    const [header, line] = table.stdout.split('\n');
    expect(header).toMatch(/est\. cost\s+with scoring\s+from cache/);
    const escape = (t: string) => t.replace(/[$.]/g, (c) => `\\${c}`);
    // est. cost, then with scoring, then the calls from cache, then the date.
    expect(line).toMatch(new RegExp(`  ${escape(formatUsd(listed!.estCostUsd))}\\s+${escape(formatUsd(listed!.totalWithScoringUsd))}\\s+\\d+  \\d{4}-`));
  });
});
