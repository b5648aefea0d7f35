/**
 * The leaderboard as a table: per model the vignettes scored, the mean with its 95 % interval (the
 * pairwise baseline's own row says "baseline": its 0.5 is by definition) and standard error, the
 * responses not scored when any were, and, for pass/fail scorers, pass@K and pass^K, and over several epochs the flip rate.
 * Used by the Results view (whole run and each slice) and the Compare view.
 * Runs on: renderer.
 */
import type { ModelScore } from '../api/types.js';
import { formatInt } from '../format.js';
import { formatInterval, formatScore } from '../../../core/common/score-format.js';
import { ScrollRegion } from './scroll-region.js';

/** Highest mean first; ties keep the report's order. */
export function byMeanDescending(models: readonly ModelScore[]): ModelScore[] {
  return [...models].sort((a, b) => b.mean - a.mean);
}

/** The largest k the report gives pass@k for (the run's epochs), or null for a graded scorer. */
function largestK(models: readonly ModelScore[]): string | null {
  const ks = models.flatMap((m) => Object.keys(m.pass_at_k).map(Number)).filter(Number.isFinite);
  return ks.length === 0 ? null : String(Math.max(...ks));
}

export function ModelScoreTable({ models, testId, caption }: { models: readonly ModelScore[]; testId: string; caption: string }) {
  const consistency = models.some((m) => m.flip_rate !== null);
  const gaps = models.some((m) => m.not_scored > 0);
  const k = largestK(models);
  return (
    <ScrollRegion label={caption}>
      <table className="table compact" data-testid={testId}>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col" className="num" title="Vignettes with at least one score">n</th>
            <th scope="col" className="num">Mean</th>
            <th scope="col" className="num">95% CI</th>
            <th scope="col" className="num" title="Standard error of the mean">SE</th>
            {gaps ? (
              <th scope="col" className="num" title="Responses with no verdict (a judge failed or gave none, or the scorer could not score them): missing, not fails">Not scored</th>
            ) : null}
            {consistency ? (
              <th scope="col" className="num" title="The chance that two epochs of one vignette disagree">Flip rate</th>
            ) : null}
            {k !== null ? (
              <>
                <th scope="col" className="num" title={`At least one of ${k} epochs passes`}>pass@{k}</th>
                <th scope="col" className="num" title={`All ${k} epochs pass`}>pass^{k}</th>
              </>
            ) : null}
            <th scope="col" className="num" title="Share of the variance due to epoch noise: near 1, more epochs would help; near 0, more vignettes would">
              Epoch noise
            </th>
          </tr>
        </thead>
        <tbody>
          {models.map((m) => (
            <tr key={m.model} data-model={m.model}>
              <th scope="row" className="nowrap">{m.model}</th>
              <td className="num">{formatInt(m.n)}</td>
              <td className="num" data-col="mean">{formatScore(m.mean)}</td>
              <td className="num nowrap" data-col="ci95">{m.role === 'baseline' ? 'baseline' : formatInterval(m.ci95)}</td>
              <td className="num">{formatScore(m.stderr)}</td>
              {gaps ? (
                <td className="num" data-col="not-scored">
                  {formatInt(m.not_scored)} ({(100 * m.not_scored_share).toFixed(1)} %)
                </td>
              ) : null}
              {consistency ? <td className="num" data-col="flip-rate">{formatScore(m.flip_rate)}</td> : null}
              {k !== null ? (
                <>
                  <td className="num">{formatScore(m.pass_at_k[k])}</td>
                  <td className="num">{formatScore(m.pass_hat_k[k])}</td>
                </>
              ) : null}
              <td className="num">{formatScore(m.epoch_noise_share)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
