/**
 * How scores, intervals, differences and p-values read on screen, the same in the Results and
 * Compare views. Scores live in [0, 1]; three decimals keep a difference of one vignette in a
 * thousand visible without pretending to more precision than a 95 % interval has.
 * Runs on: renderer.
 */

const MINUS = '\u2212';

export function formatScore(value: number | null | undefined): string {
  return value === null || value === undefined || !Number.isFinite(value) ? '—' : value.toFixed(3);
}

/** A signed difference: +0.200, −0.050, 0.000. */
export function formatDiff(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const text = Math.abs(value).toFixed(3);
  if (text === '0.000') return text;
  return value > 0 ? `+${text}` : `${MINUS}${text}`;
}

/** A 95 % interval as [lo, hi]; signed when it belongs to a difference. */
export function formatInterval(ci: readonly [number, number] | null | undefined, signed = false): string {
  if (!ci) return '—';
  const f = signed ? formatDiff : formatScore;
  return `[${f(ci[0])}, ${f(ci[1])}]`;
}

export function formatPValue(p: number | null | undefined): string {
  if (p === null || p === undefined || !Number.isFinite(p)) return '—';
  return p < 0.001 ? '< 0.001' : p.toFixed(3);
}
