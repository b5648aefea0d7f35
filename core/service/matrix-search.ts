/**
 * The Results grid searched: the vignette x model matrix over only the vignettes that match a
 * text, in any of its orders. The matches' indexes become the matrix's positions 0..k-1, so the
 * matrix pages, sorts and counts them as it does a whole run; its scores are read range by range of
 * consecutive matches (one read per run of neighbours, not per vignette).
 * Runs on: Node (core).
 */
import type { MatrixSource } from '../scoring/score-matrix.js';

/** Consecutive stretches of `idxs[lo..hi]` (sorted) as [first position, first idx, last idx]. */
function stretches(idxs: readonly number[], lo: number, hi: number): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  for (let p = Math.max(0, lo); p <= Math.min(hi, idxs.length - 1); ) {
    let q = p;
    while (q + 1 <= hi && q + 1 < idxs.length && idxs[q + 1] === idxs[q]! + 1) q++;
    out.push([p, idxs[p]!, idxs[q]!]);
    p = q + 1;
  }
  return out;
}

/** A matrix source over the vignettes `idxs` (manifest order), numbered from 0. */
export function searchedSource(source: MatrixSource, idxs: readonly number[]): MatrixSource {
  return {
    scores: (lo, hi) =>
      stretches(idxs, lo, hi).flatMap(([first, from, to]) => source.scores(from, to).map((s) => ({ ...s, vignetteIdx: first + s.vignetteIdx - from }))),
    heads: (lo, hi) => stretches(idxs, lo, hi).flatMap(([first, from, to]) => source.heads(from, to).map((h) => ({ ...h, idx: first + h.idx - from }))),
  };
}
