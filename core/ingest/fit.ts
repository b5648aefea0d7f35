/**
 * Fits a pack's files to a token budget: while the files do not fit, the lowest tier still present
 * loses its largest file (bulk before code, code before tests and docs), so a repository that is
 * a little too big loses its generated files and keeps everything a reviewer reads.
 * Runs on: Node (core).
 */
import { TIER_DROP_ORDER, type FileTier } from './file-rules.js';

export interface SizedFile {
  path: string;
  text: string;
  tier: FileTier;
  /** The file's block (delimiter and text) in tokens, as the model's estimate counts it. */
  tokens: number;
}

export interface FitResult<F extends SizedFile> {
  kept: F[];
  dropped: F[];
  tokens: number;
}

/** Keeps the files of `files` that fit `budget` tokens beside `overhead` tokens, dropping by tier and size. */
export function fitFiles<F extends SizedFile>(files: readonly F[], overhead: number, budget: number): FitResult<F> {
  let tokens = overhead;
  for (const f of files) tokens += f.tokens;
  const dropOrder = [...files].sort(
    (a, b) => TIER_DROP_ORDER.indexOf(a.tier) - TIER_DROP_ORDER.indexOf(b.tier) || b.tokens - a.tokens || (a.path < b.path ? -1 : 1),
  );
  const dropped = new Set<F>();
  for (const f of dropOrder) {
    if (tokens <= budget) break;
    dropped.add(f);
    tokens -= f.tokens;
  }
  return { kept: files.filter((f) => !dropped.has(f)), dropped: files.filter((f) => dropped.has(f)), tokens };
}
