/**
 * What scoring cost beside the sweep: the LLM judges' calls per judge model and the candidates'
 * retries of hard fails, each apart, and the sum of everything billed (sweep + judges + retries),
 * for one run or every run. Judges can cost more than the sweep; a total without them misleads.
 * Runs on: renderer.
 */
import { useClient } from '../api/client-context.js';
import type { StatsReport } from '../api/types.js';
import { formatUsd } from '../format.js';
import { ModelCostTable } from './model-cost-table.js';
import { useFetch } from './use-fetch.js';

export function ScoringCosts({ stats }: { stats: StatsReport | null | undefined }) {
  if (!stats || (stats.judges.length === 0 && stats.retries.length === 0)) return null;
  return (
    <div className="card" data-testid="scoring-costs">
      <header className="card-header">
        <h2 className="h3">With scoring</h2>
        <span data-testid="cost-in-all">
          In all <strong>{formatUsd(stats.totalWithScoringUsd)}</strong>
          <span className="muted small">
            {' '}
            = sweep {formatUsd(stats.totalEstCostUsd)} + judges {formatUsd(stats.totalJudgeCostUsd)} + retries {formatUsd(stats.totalRetryCostUsd)}
          </span>
        </span>
      </header>
      {stats.judges.length > 0 ? (
        <>
          <h3 className="h3 pad">Judges' calls</h3>
          <ModelCostTable models={stats.judges} testId="judge-usage" />
        </>
      ) : null}
      {stats.retries.length > 0 ? (
        <>
          <h3 className="h3 pad">Retries of hard fails</h3>
          <ModelCostTable models={stats.retries} testId="retry-usage" />
        </>
      ) : null}
    </div>
  );
}

/** One run's scoring costs, fetched again when `refresh` changes (the run's status, say). */
export function RunScoringCosts({ runId, refresh }: { runId: string; refresh: unknown }) {
  const client = useClient();
  const stats = useFetch(() => client.call('stats', { runId }), [client, runId, refresh]);
  return <ScoringCosts stats={stats.data} />;
}
