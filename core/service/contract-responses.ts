/**
 * The contract's Responses search: the fields `responses` takes beyond model, epoch, vignette and
 * text (a verdict, a scorer, a metadata field, a sort), and the page's score columns, one per
 * scorer version attached to the run. Re-exported by the contract (contract.ts).
 * Runs on: Node (core); types shared with the renderer.
 */
import { z } from 'zod';
import type { ScorerKind, Severity } from '../domain.js';
import type { PricedResponse } from './contract-costs.js';

/** Spread into the `responses` input's schema. */
export const ResponseSearchFields = {
  /** Only records with this verdict (`fail`: some judge failed it) from `scorer`, or from any scorer of the run. */
  verdict: z.enum(['fail', 'pass', 'unscored']).optional(),
  /** A scorer's name (or version): whose verdict `verdict` reads, and whose value `sort=score` sorts by (default: the first). */
  scorer: z.string().min(1).max(200).optional(),
  /** Only records whose vignette's metadata has this key ... */
  metaKey: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^"\\]+$/, 'a metadata key without quotes or backslashes')
    .optional(),
  /** ... with this value (compared as text). */
  metaValue: z.string().max(1000).optional(),
  /**
   * Where a page starts, in any order: after this record (the previous page's `nextAfter`, the seq of
   * its last record), so a deep page costs what the first does and ties never show a record twice.
   * (`cursor`, the older paging, stays: the last seq in seq order, a sorted page's offset.)
   */
  after: z.number().int().min(1).optional(),
  /** The order (default `seq`, the order records landed in), ties broken by seq in the same direction. */
  sort: z.enum(['seq', 'vignette', 'model', 'epoch', 'latency', 'tokens', 'score']).optional(),
  order: z.enum(['asc', 'desc']).optional(),
};

/** One score column of a responses page: a scorer version attached to the run, in the order attached. */
export interface ResponseScorerColumn {
  scorerId: number;
  name: string;
  version: string;
  kind: ScorerKind;
}

/** One scorer's verdict on a record, over its judges (the sweep's record, not a retry's). */
export interface ResponseScoreCell {
  /** The judges' mean value. */
  value: number;
  /** Pass/fail: false when some judge failed it, true when all passed it; null for graded scorers. */
  passed: boolean | null;
  severity: Severity;
}

/** A response with its cost and its scores: `scores[i]` is the page's `scorers[i]`'s (null: no verdict yet). */
export interface ScoredResponse extends PricedResponse {
  scores: Array<ResponseScoreCell | null>;
}
