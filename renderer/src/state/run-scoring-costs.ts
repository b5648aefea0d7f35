/**
 * A run's line in the Runs list kept current as its scoring moves: a pushed scoring status carries
 * the judges' and the retries' usage, priced as the service prices them, so the line's total with
 * scoring follows without fetching the list again (a run event brings the service's own figures).
 * Runs on: renderer.
 */
import type { ModelCost, RunSummary, ScoringStatus } from '../api/types.js';

const cost = (usage: readonly ModelCost[]) => usage.reduce((s, u) => s + u.estCostUsd, 0);

/** The run with its judge, retry and all-in costs as the scoring status has them. */
export function withScoringCosts(run: RunSummary, status: Pick<ScoringStatus, 'judgeUsage' | 'retryUsage'>): RunSummary {
  const judgeCostUsd = cost(status.judgeUsage);
  const retryCostUsd = cost(status.retryUsage);
  return { ...run, judgeCostUsd, retryCostUsd, totalWithScoringUsd: run.estCostUsd + judgeCostUsd + retryCostUsd };
}
