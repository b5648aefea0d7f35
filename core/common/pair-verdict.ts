/**
 * A pair of models' verdict in a score report, and the words it reads as: the one rule of the text
 * report, the app's pair matrix and Compare, and the HTML report. The verdict is decided in
 * core/scoring/report.ts (better only at a Holm-adjusted p below 0.05 of the test shown).
 * Browser-safe: it imports nothing, so the renderer may import it.
 * Runs on: Node (core) and the renderer (browser-safe).
 */

export type PairVerdict = 'a_better' | 'b_better' | 'not_distinguishable' | 'too_few' | 'too_few_clusters';

/** Why a pair got no verdict, as a reader is told; null when it got one (better, or not distinguishable). */
export function noVerdictText(verdict: PairVerdict): string | null {
  switch (verdict) {
    case 'too_few':
      return 'too few vignettes to compare';
    case 'too_few_clusters':
      return 'too few clusters to compare';
    default:
      return null;
  }
}

/** The verdict in words, naming the better model: "a better", "not distinguishable", "too few vignettes to compare". */
export function pairVerdictText(pair: { a: string; b: string; verdict: PairVerdict }): string {
  if (pair.verdict === 'a_better') return `${pair.a} better`;
  if (pair.verdict === 'b_better') return `${pair.b} better`;
  return noVerdictText(pair.verdict) ?? 'not distinguishable';
}
