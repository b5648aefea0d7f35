/**
 * Reading paired comparisons: a pair of the report from either side of the matrix, and the model a
 * run comparison's side names.
 * Runs on: renderer.
 */
import type { PairComparison } from '../api/types.js';

/** The interval of b − a read as a − b: the same evidence seen from the other side of the matrix. */
export function flipInterval(ci: readonly [number, number] | null): [number, number] | null {
  return ci === null ? null : [-ci[1], -ci[0]];
}

/** The comparison of row − column, read from whichever order the report holds it in. */
export function pairOf(pairs: readonly PairComparison[], row: string, column: string): PairComparison | null {
  for (const p of pairs) {
    if (p.a === row && p.b === column) return p;
    if (p.a === column && p.b === row) {
      const verdict = p.verdict === 'a_better' ? 'b_better' : p.verdict === 'b_better' ? 'a_better' : p.verdict;
      return { ...p, a: row, b: column, diff: -p.diff, ci95: flipInterval(p.ci95), verdict };
    }
  }
  return null;
}

/** The model a run comparison's side names (`runId:model`; a run id holds no colon, a model id may). */
export function modelOfSide(side: string): string {
  const colon = side.indexOf(':');
  return colon < 0 ? side : side.slice(colon + 1);
}
