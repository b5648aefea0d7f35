/**
 * The Run view's contention panel for a run posed until decided: which models are still posed, and
 * each pair decided, equivalent or open, at which n, with its anytime-valid interval; the calls made
 * against the full sweep, and the calls and dollars that saved (decision-table.tsx). It reads the
 * contract's `decide` (the run replayed with its own settings from what is scored so far) again as
 * the run's calls move, and once more when the run ends.
 * Runs on: renderer.
 */
import { useClient } from '../api/client-context.js';
import type { RunSummary } from '../api/types.js';
import { DecisionTable } from './decision-table.js';
import { ErrorNotice } from './notice.js';
import { useFetch } from './use-fetch.js';

export function RunDecisionPanel({ run }: { run: RunSummary }) {
  const client = useClient();
  const posed = run.options.untilDecided;
  // Read again every 20 calls and when the status changes: at most a few times a batch.
  const decision = useFetch(posed ? () => client.call('decide', { runId: run.id }) : null, [run.id, run.status, Math.floor(run.calls / 20)]);
  if (!posed) return null;
  const d = decision.data;
  const contention = d ? d.models.filter((m) => d.pairs.some((p) => p.open && (p.a === m.model || p.b === m.model))).map((m) => m.model) : [];
  return (
    <div className="card" data-testid="run-decision">
      <header className="card-header">
        <h2 className="h3">Until decided</h2>
        <span className="muted">
          order seed {posed.orderSeed}, batches of {posed.batch}, α {posed.alpha}
          {posed.margin > 0 ? `, margin ±${posed.margin}` : ''}
        </span>
      </header>
      <ErrorNotice error={decision.error} title="Could not read the decision" />
      {d ? (
        <>
          <p data-testid="run-contention">
            {contention.length > 0 ? `Still posed: ${contention.join(', ')}` : 'Every pair is stopped: no model is posed any more.'}
          </p>
          <DecisionTable decision={d} running={run.status === 'running'} />
        </>
      ) : (
        <p className="muted">Reading the decision…</p>
      )}
    </div>
  );
}
