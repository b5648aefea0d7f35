/**
 * The scorers attached to a run and how far each got: layer, kind, version, judges, records
 * scored / still to score / failed, with a progress bar, and for a scorer that could not score
 * some records, why (a judge without its API key, say) as an alert above them; judge calls' tokens and cost, and the
 * calls that retried hard fails, each apart from the sweep's own.
 * Runs on: renderer.
 */
import type { ScoringStatus } from '../api/types.js';
import { formatInt } from '../format.js';
import { ModelCostTable } from './model-cost-table.js';
import { ProgressBar } from './progress-bar.js';
import { ScrollRegion } from './scroll-region.js';

export function ScoringStatusTable({ status }: { status: ScoringStatus }) {
  return (
    <>
      {status.scorers
        .filter((s) => s.failed > 0)
        .map((s) => (
          <div key={s.version} className="notice notice-error" role="alert" data-testid="scorer-failure" data-scorer={s.name}>
            Scorer <strong>{s.name}</strong> could not score {formatInt(s.failed)} record{s.failed === 1 ? '' : 's'}, left out of every figure:{' '}
            {s.lastError ?? 'no reason was kept'}. Fix the cause and score the run again: only those records are scored again.
          </div>
        ))}
      <ScrollRegion label="Scorers">
        <table className="table compact" data-testid="scoring-status">
          <caption className="visually-hidden">Scorers of this run and their progress</caption>
          <thead>
            <tr>
              <th scope="col">Scorer</th>
              <th scope="col">Layer</th>
              <th scope="col">Version</th>
              <th scope="col" className="num">Scored</th>
              <th scope="col" className="num">To score</th>
              <th scope="col" className="num">Failed</th>
              <th scope="col" className="col-progress">Progress</th>
            </tr>
          </thead>
          <tbody>
            {status.scorers.map((s) => {
              const total = s.done + s.pending + s.failed;
              return (
                <tr key={`${s.name}:${s.version}`} data-scorer={s.name}>
                  <th scope="row" className="nowrap">
                    {s.name}
                    <div className="sub">
                      {s.kind === 'pass_fail' ? 'pass / fail' : 'graded'}
                      {s.judges.length > 0 ? ` · judges ${s.judges.join(', ')}` : ''}
                    </div>
                  </th>
                  <td>{s.layer}</td>
                  <td className="mono" title={s.version}>
                    {s.version.slice(0, 10)}
                  </td>
                  <td className="num" data-col="done">{formatInt(s.done)}</td>
                  <td className="num" data-col="pending">{formatInt(s.pending)}</td>
                  <td className={`num${s.failed > 0 ? ' text-error' : ''}`}>{formatInt(s.failed)}</td>
                  <td>
                    <ProgressBar fraction={total === 0 ? 0 : (s.done + s.failed) / total} label={`${s.name} scoring progress`} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </ScrollRegion>
      {status.judgeUsage.length > 0 ? (
        <div className="judge-usage">
          <h3>Judge calls</h3>
          <p className="muted small">Accounted apart from the sweep's own calls.</p>
          <ModelCostTable models={status.judgeUsage} testId="judge-usage" withTotal />
        </div>
      ) : null}
      {status.retryUsage.length > 0 ? (
        <div className="judge-usage">
          <h3>Retries of hard fails</h3>
          <p className="muted small">The models' extra calls for scorers with retryOnHardFail, apart from the sweep's own calls.</p>
          <ModelCostTable models={status.retryUsage} testId="retry-usage" withTotal />
        </div>
      ) : null}
    </>
  );
}
