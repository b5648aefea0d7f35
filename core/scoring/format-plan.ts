/**
 * A plan as people read it: where its variances came from, the grid of designs (epochs, vignettes
 * needed, calls, tokens, dollars, wall time; the cheapest that reaches the power marked), the
 * minimum detectable difference at the manifest's own size, and the notes (too small, guesses).
 * Runs on: Node (core); pure.
 */
import { formatUsd } from '../common/money.js';
import { alignColumns } from '../text-table.js';
import type { Plan } from './plan.js';

function usd(x: number | null): string {
  return x === null ? 'n/a' : formatUsd(x);
}

/** Seconds as "42 s", "12 min", "3.4 h". */
export function duration(s: number | null): string {
  if (s === null) return 'n/a';
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

export function formatPlan(plan: Plan): string[] {
  const m = plan.pairs.length;
  const lines = [
    `plan: detect a difference of ${plan.delta} with power ${plan.power} at alpha ${plan.alpha}` +
      (m > 1 ? ` over ${m} pairs (Bonferroni: ${plan.alpha_per_pair.toPrecision(3)} each, Holm's first step)` : ''),
    `from ${plan.source}; models ${plan.models.join(', ')}${plan.manifest_vignettes === null ? '' : `; the manifest has ${plan.manifest_vignettes} vignettes`}`,
    '',
  ];
  const rows = [['epochs', 'vignettes', 'formula', 'calls', 'judge calls', 'tokens', 'cost', 'wall time', '']];
  for (const d of plan.designs) {
    const mark = d.cheapest ? '← cheapest that reaches the power' : d.feasible ? '' : 'more than the manifest has';
    rows.push([String(d.epochs), String(d.vignettes), d.formula, String(d.calls), String(d.judge_calls), d.tokens === null ? 'n/a' : String(d.tokens), usd(d.cost_usd), duration(d.wall_seconds), mark]);
  }
  lines.push(...alignColumns(rows).map((l) => l.trimEnd()));
  if (plan.manifest_vignettes !== null) {
    const mde = plan.mde_at_manifest.map((r) => `${r.epochs} epoch${r.epochs === 1 ? '' : 's'}: ${r.mde === null ? 'none' : r.mde.toFixed(3)}`).join(', ');
    lines.push('', `smallest difference the manifest's ${plan.manifest_vignettes} vignettes detect (power ${plan.power}): ${mde}`);
  }
  lines.push(`pacing: ${plan.pace.map((p) => `${p.provider} ${p.callsPerSecond.toFixed(2)} calls/s (${p.basis})`).join('; ')}`);
  for (const n of plan.notes) lines.push(`note: ${n}`);
  return lines;
}
