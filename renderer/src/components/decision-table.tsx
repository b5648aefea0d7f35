/**
 * An anytime-valid decision as a table: each pair decided, equivalent or open, at which n, with
 * its interval of a − b; then the calls made against the full sweep, and the calls and dollars
 * that saved. The Run view's contention panel and the Results view of a run posed until decided
 * show the same.
 * Runs on: renderer.
 */
import { formatInterval, TEXT_STYLE, type ScoreStyle } from '../../../core/common/score-format.js';
import type { DecisionReport } from '../api/types.js';
import { formatInt, formatUsd } from '../format.js';

/** The decision's interval reads as `decide` prints it (ASCII minus), an exact zero unsigned. */
const DECISION_STYLE: ScoreStyle = { ...TEXT_STYLE, zero: '' };

/** `running`: an open pair of a run still posing reads "open", else its status (undecided once the run ended). */
export function DecisionTable({ decision: d, running }: { decision: DecisionReport; running: boolean }) {
  return (
    <>
      <table className="table">
        <thead>
          <tr>
            <th>pair</th>
            <th>decision</th>
            <th>at n</th>
            <th>anytime-valid interval of a − b</th>
          </tr>
        </thead>
        <tbody>
          {d.pairs.map((p) => (
            <tr key={`${p.a}/${p.b}`} data-testid="decision-pair">
              <td>
                {p.a} − {p.b}
              </td>
              <td>{p.status === 'decided' ? `${p.winner} better` : p.open && running ? 'open' : p.status}</td>
              <td>{formatInt(p.n)}</td>
              <td>
                {formatInterval(p.interval, true, DECISION_STYLE)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {d.budget_spent ? (
        <p className="badge badge-warn" role="status" data-testid="decision-budget">
          Stopped by the budget: the next batch would have passed {formatInt(d.max_calls ?? 0)} calls; the pairs still open are undecided.
        </p>
      ) : null}
      <p className="muted" data-testid="decision-calls">
        {formatInt(d.calls)} of the full sweep&apos;s {formatInt(d.calls_full)} calls ({d.calls_full > 0 ? Math.round((100 * d.calls) / d.calls_full) : 100} %):{' '}
        <span data-testid="decision-saved">
          {formatInt(d.calls_full - d.calls)} calls and {formatUsd(d.usd_saved)} saved
        </span>
      </p>
    </>
  );
}
