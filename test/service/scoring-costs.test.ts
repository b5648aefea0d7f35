/**
 * What a run cost in all: the sweep's calls, the judges' and the retries of hard fails, each apart
 * and summed. First a case worked by hand (token counts and prices chosen so every figure can be
 * checked on paper); then a real engine (mock-strong against mock-weak, an exact-match rule that
 * retries hard fails, a mock judge at the catalog's $0.50 / $1.50 per million tokens), whose stats
 * are checked against the judge's own price from the catalog and the tables' own token counts.
 * Runs on: Node (tests).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ModelCost, StatsReport } from '../../core/service/contract.js';
import type { Engine } from '../../core/service/engine.js';
import { costWithScoring, priceUsage } from '../../core/service/summaries.js';
import { useScoredRun } from '../helpers/scored-run.js';

const usage = (model: string, inputTokens: number, outputTokens: number) => ({
  model,
  inputTokens,
  outputTokens,
  calls: 1,
  cachedCalls: 0,
  cachedInputTokens: 0,
  cachedOutputTokens: 0,
});

describe('the cost of a run with its scoring', () => {
  it('adds judges and retries to the sweep, as worked by hand', () => {
    const price = (inputPerMTok: number, outputPerMTok: number) => ({ priceOf: () => ({ inputPerMTok, outputPerMTok }) });
    // Sweep: 1,000,000 in at $2/M = $2.00, 500,000 out at $10/M = $5.00: $7.00.
    const sweep: ModelCost[] = [priceUsage(usage('m', 1_000_000, 500_000), price(2, 10))];
    // Judge: 2,000,000 in at $0.50/M = $1.00, 100,000 out at $1.50/M = $0.15: $1.15.
    const judges: ModelCost[] = [priceUsage(usage('j', 2_000_000, 100_000), price(0.5, 1.5))];
    // Retries (the candidate again, at its price): 300,000 in = $0.60, 200,000 out = $2.00: $2.60.
    const retries: ModelCost[] = [priceUsage(usage('m', 300_000, 200_000), price(2, 10))];
    const all = costWithScoring(sweep, judges, retries);
    expect(all.sweep).toBeCloseTo(7, 10);
    expect(all.judges).toBeCloseTo(1.15, 10);
    expect(all.retries).toBeCloseTo(2.6, 10);
    // $7.00 + $1.15 + $2.60 = $10.75.
    expect(all.total).toBeCloseTo(10.75, 10);
  });

  describe('on a real engine', () => {
    let engine: Engine;
    let runId: string;
    let stats: StatsReport;
    useScoredRun(
      {
        vignettes: 12,
        epochs: 2,
        scorers: {
          scorers: [
            { name: 'exact', type: 'match', retryOnHardFail: 1 },
            { name: 'judged', type: 'judge', judges: ['mock-judge'], rubric: 'Is the answer the right option?' },
          ],
        },
      },
      (run) => ({ engine, runId } = run),
    );
    beforeAll(async () => {
      stats = await engine.service.stats({ runId });
    });

    it("prices the judge's calls at the judge's own catalog price, apart and in the total", async () => {
      const judge = (await engine.service.catalog()).find((m) => m.id === 'mock-judge')!;
      expect([judge.inputPerMTok, judge.outputPerMTok]).toEqual([0.5, 1.5]);
      const tokens = engine.store.db
        .prepare(`SELECT SUM(calls) AS calls, SUM(input_tokens) AS inp, SUM(output_tokens) AS out FROM judge_usage WHERE run_id = ?`)
        .get(runId) as { calls: number; inp: number; out: number };
      expect(tokens.calls).toBe(48);
      expect(stats.judges).toHaveLength(1);
      expect(stats.judges[0]).toMatchObject({ model: 'mock-judge', calls: 48, inputTokens: tokens.inp, outputTokens: tokens.out });
      expect(stats.totalJudgeCostUsd).toBeCloseTo((tokens.inp * 0.5 + tokens.out * 1.5) / 1e6, 12);
      const retries = stats.retries.reduce((s, r) => s + r.estCostUsd, 0);
      expect(stats.retries.length, 'mock-weak misses: some records are retried').toBeGreaterThan(0);
      expect(stats.totalRetryCostUsd).toBeCloseTo(retries, 12);
      expect(stats.totalWithScoringUsd).toBeCloseTo(stats.totalEstCostUsd + stats.totalJudgeCostUsd + stats.totalRetryCostUsd, 12);
      // The judges' figures are the scoring status's, and every run's stats hold this run's.
      expect((await engine.service.scoringStatus({ runId })).judgeUsage.map((u) => u.estCostUsd)).toEqual(stats.judges.map((u) => u.estCostUsd));
      const overall = await engine.service.stats();
      expect(overall.totalWithScoringUsd).toBeCloseTo(stats.totalWithScoringUsd, 12);
    });
  });
});
