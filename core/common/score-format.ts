/**
 * How scores, intervals, differences and p-values read, the one rule of the app, the command line,
 * the Markdown gate and the HTML report. Scores live in [0, 1]; three decimals keep a difference of
 * one vignette in a thousand visible without pretending to more precision than a 95 % interval has;
 * a p-value below 0.001 reads "<0.001". Two styles share the rule and differ only in how they write
 * it: the app's (U+2212 minus, "—" for a missing value, a difference too small to show reads 0.000)
 * and the text reports' (ASCII "-" so Markdown and terminals show it alike, "n/a", ±0.000 for an
 * exact zero while a difference too small to show keeps its sign, +0.000 or -0.000).
 * Browser-safe: it imports nothing, so the renderer may import it.
 * Runs on: Node (core) and the renderer (browser-safe).
 */

/** How one surface writes the rule. */
export interface ScoreStyle {
  /** What stands for a missing value (null, undefined or not finite). */
  readonly missing: string;
  /** The sign before a negative difference. */
  readonly minus: string;
  /** What stands before a difference of exactly zero. */
  readonly zero: string;
  /** Whether a difference that rounds to zero keeps its sign (+0.000) or reads as zero does. */
  readonly signsBelowPrecision: boolean;
}

/** The app's style (the renderer's views). */
export const APP_STYLE: ScoreStyle = { missing: '—', minus: '\u2212', zero: '', signsBelowPrecision: false };

/** The text reports' style: `panoptes report`, decide, gate (text and Markdown) and the HTML report. */
export const TEXT_STYLE: ScoreStyle = { missing: 'n/a', minus: '-', zero: '±', signsBelowPrecision: true };

function isMissing(value: number | null | undefined): value is null | undefined {
  return value === null || value === undefined || !Number.isFinite(value);
}

export function formatScore(value: number | null | undefined, style: ScoreStyle = APP_STYLE): string {
  return isMissing(value) ? style.missing : value.toFixed(3);
}

/** A signed difference: +0.200, −0.050, 0.000 in the app; +0.200, -0.050, ±0.000 in text. */
export function formatDiff(value: number | null | undefined, style: ScoreStyle = APP_STYLE): string {
  if (isMissing(value)) return style.missing;
  const digits = Math.abs(value).toFixed(3);
  if (value === 0 || (!style.signsBelowPrecision && Number(digits) === 0)) return `${style.zero}${digits}`;
  return `${value > 0 ? '+' : style.minus}${digits}`;
}

/** A 95 % interval as [lo, hi]; signed when it belongs to a difference. */
export function formatInterval(ci: readonly [number, number] | null | undefined, signed = false, style: ScoreStyle = APP_STYLE): string {
  if (!ci) return style.missing;
  const f = signed ? formatDiff : formatScore;
  return `[${f(ci[0], style)}, ${f(ci[1], style)}]`;
}

/** p-values: three places, or "<0.001". */
export function formatPValue(p: number | null | undefined, style: ScoreStyle = APP_STYLE): string {
  if (isMissing(p)) return style.missing;
  return p < 0.001 ? '<0.001' : p.toFixed(3);
}
