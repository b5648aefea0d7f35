/**
 * How scores, intervals, differences and p-values read, the one rule of the app, the command line
 * and the HTML report. Scores live in [0, 1]; three decimals keep a difference of one vignette in a
 * thousand visible without pretending to more precision than a 95 % interval has; a p-value below
 * 0.001 reads "<0.001". What stands for a missing value is the surface's own (the app's "—", the
 * text report's "n/a"), so each function takes it.
 * Browser-safe: it imports nothing, so the renderer may import it.
 * Runs on: Node (core) and the renderer (browser-safe).
 */

const MINUS = '\u2212';

export function formatScore(value: number | null | undefined, missing = '—'): string {
  return value === null || value === undefined || !Number.isFinite(value) ? missing : value.toFixed(3);
}

/** A signed difference: +0.200, −0.050, 0.000. */
export function formatDiff(value: number | null | undefined, missing = '—'): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return missing;
  const text = Math.abs(value).toFixed(3);
  if (text === '0.000') return text;
  return value > 0 ? `+${text}` : `${MINUS}${text}`;
}

/** A 95 % interval as [lo, hi]; signed when it belongs to a difference. */
export function formatInterval(ci: readonly [number, number] | null | undefined, signed = false, missing = '—'): string {
  if (!ci) return missing;
  const f = signed ? formatDiff : formatScore;
  return `[${f(ci[0])}, ${f(ci[1])}]`;
}

/** p-values: three places, or "<0.001". */
export function formatPValue(p: number | null | undefined, missing = '—'): string {
  if (p === null || p === undefined || !Number.isFinite(p)) return missing;
  return p < 0.001 ? '<0.001' : p.toFixed(3);
}
