/**
 * Every pair of models, paired on the vignettes both answered, as a matrix: the cell in row A and
 * column B is A − B with its 95 % interval and Holm-adjusted p. A cell is "better" or "worse" only
 * when that Holm-adjusted p is below 0.05; otherwise it says "not distinguishable", with the
 * smallest difference this many vignettes could detect, so the user can tell "no difference" from
 * "too few vignettes", and under the report's minimum it says "too few vignettes to compare".
 * Runs on: renderer.
 */
import type { PairComparison } from '../api/types.js';
import { pairOf } from './pairs.js';
import { noVerdictText } from '../../../core/common/pair-verdict.js';
import { formatDiff, formatInterval, formatPValue, formatScore } from '../../../core/common/score-format.js';
import { ScrollRegion } from './scroll-region.js';

function PairCell({ pair }: { pair: PairComparison | null }) {
  if (!pair) return <td className="pair-cell muted">—</td>;
  const verdict = pair.verdict === 'a_better' ? 'better' : pair.verdict === 'b_better' ? 'worse' : 'same';
  return (
    <td className={`pair-cell pair-${verdict}`} data-pair={`${pair.a}|${pair.b}`}>
      <div className="pair-diff" data-col="diff">{formatDiff(pair.diff)}</div>
      <div className="small nowrap" data-col="ci95">{formatInterval(pair.ci95, true)}</div>
      <div className="small muted nowrap">
        p<sub>Holm</sub> {formatPValue(pair.p_holm)} · n {pair.n}
      </div>
      {noVerdictText(pair.verdict) !== null ? (
        <div className="small pair-verdict">{noVerdictText(pair.verdict)}</div>
      ) : pair.distinguishable ? null : (
        <div className="small pair-verdict" title={`With ${pair.n} vignettes a difference below about ${formatScore(pair.min_detectable_diff)} would likely go unseen`}>
          not distinguishable
          {pair.min_detectable_diff !== null ? <span className="muted"> (MDD {formatScore(pair.min_detectable_diff)})</span> : null}
        </div>
      )}
    </td>
  );
}

export function PairMatrix({ models, pairs, testId }: { models: readonly string[]; pairs: readonly PairComparison[]; testId: string }) {
  return (
    <ScrollRegion label="Paired differences">
      <table className="table pair-matrix" data-testid={testId}>
        <caption className="visually-hidden">Paired differences, row minus column, with 95 % confidence intervals</caption>
        <thead>
          <tr>
            <th scope="col">
              <span className="visually-hidden">Row model</span>
              <span aria-hidden="true">row − column</span>
            </th>
            {models.map((m) => (
              <th key={m} scope="col" className="nowrap">
                {m}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {models.map((row) => (
            <tr key={row}>
              <th scope="row" className="nowrap">
                {row}
              </th>
              {models.map((column) =>
                column === row ? (
                  <td key={column} className="pair-cell muted" aria-label="same model">
                    ·
                  </td>
                ) : (
                  <PairCell key={column} pair={pairOf(pairs, row, column)} />
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
