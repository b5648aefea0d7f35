/**
 * The Runs list follows a run's scoring: a pushed scoring status replaces the line's judge, retry
 * and all-in costs (the sweep's stays), so the total moves as judges answer without a refetch.
 * Runs on: Node (tests).
 */
import { describe, expect, it } from 'vitest';
import type { ModelCost, RunSummary } from '../../core/service/contract.js';
import { withScoringCosts } from '../../renderer/src/state/run-scoring-costs.js';

const cost = (model: string, estCostUsd: number): ModelCost => ({
  model,
  inputTokens: 0,
  outputTokens: 0,
  calls: 1,
  cachedCalls: 0,
  cachedInputTokens: 0,
  cachedOutputTokens: 0,
  estCostUsd,
  savedCostUsd: 0,
});

describe('a run line with its scoring costs', () => {
  it('sums the judges and retries of the status onto the sweep', () => {
    const run = { id: 'r1', estCostUsd: 7, judgeCostUsd: 0, retryCostUsd: 0, totalWithScoringUsd: 7 } as RunSummary;
    const next = withScoringCosts(run, { judgeUsage: [cost('j1', 1), cost('j2', 0.15)], retryUsage: [cost('m', 2.6)] });
    expect(next.estCostUsd).toBe(7);
    expect(next.judgeCostUsd).toBeCloseTo(1.15, 12);
    expect(next.retryCostUsd).toBeCloseTo(2.6, 12);
    // $7.00 + $1.15 + $2.60 = $10.75.
    expect(next.totalWithScoringUsd).toBeCloseTo(10.75, 12);
    expect(run.totalWithScoringUsd, 'the line it was given is left as it was').toBe(7);
  });
});
