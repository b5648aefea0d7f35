/**
 * The anytime-valid decision over a run as people read it: per pair the decision, at which n, its
 * interval; per model the vignettes it would have been posed and the calls and dollars saved.
 * Runs on: Node (core); pure.
 */
import { formatUsd } from '../common/money.js';
import { alignColumns } from '../text-table.js';
import { formatInterval, TEXT_STYLE } from '../common/score-format.js';
import type { DecisionReport } from './adaptive-decision.js';

export function formatDecision(r: DecisionReport): string[] {
  const lines = [
    `run ${r.run_id}, scorer ${r.scorer}: ${r.vignettes} vignettes in the order of seed ${r.seed}, looked at every ${r.batch}; ` +
      `alpha ${r.alpha} over ${r.pairs.length} pair${r.pairs.length === 1 ? '' : 's'} (${r.alpha_per_pair.toPrecision(3)} each)${r.margin > 0 ? `, margin ±${r.margin}` : ''}` +
      `${r.max_calls === null ? '' : `, a budget of ${r.max_calls} calls`}`,
    '',
  ];
  const rows = [['a', 'b', 'decision', 'at n', 'anytime-valid interval of a − b']];
  for (const p of r.pairs) {
    const what = p.status === 'decided' ? `${p.winner} better` : p.status;
    rows.push([p.a, p.b, what, String(p.n), formatInterval(p.interval, true, TEXT_STYLE)]);
  }
  lines.push(...alignColumns(rows), '');
  const models = [['model', 'vignettes', 'calls', 'calls saved', 'saved']];
  for (const m of r.models) models.push([m.model, String(m.vignettes), String(m.calls), String(m.calls_saved), formatUsd(m.usd_saved)]);
  lines.push(...alignColumns(models));
  const share = r.calls_full > 0 ? (100 * r.calls) / r.calls_full : 100;
  lines.push(
    '',
    r.posed_until_decided
      ? `posed until decided: ${r.calls} of the full sweep's ${r.calls_full} calls (${share.toFixed(0)} %), ${r.calls_full - r.calls} saved`
      : `stopping there takes ${r.calls} of the full sweep's ${r.calls_full} calls (${share.toFixed(0)} %)`,
  );
  if (r.budget_spent) lines.push(`stopped by the budget: the next batch would have passed ${r.max_calls} calls; the pairs still open are undecided`);
  return lines;
}
