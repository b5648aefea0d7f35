/**
 * The bounds of what a user types into a run's settings, once: the contract's schemas refuse a
 * value outside them, and the app's forms say so before sending (New run, until decided, a run's
 * name and notes). Browser-safe: it imports only core/common, so the renderer may import it.
 * Runs on: Node (core) and the renderer (browser-safe).
 */
import { formatInt } from './numbers.js';

/** Epochs of a run: each vignette posed this many times to each model. */
export const EPOCHS = { min: 1, max: 10_000 } as const;
/** Jobs of a run in flight at once. */
export const CONCURRENCY = { min: 1, max: 1024 } as const;
/** A model call's sampling temperature. */
export const TEMPERATURE = { min: 0, max: 2 } as const;
/** A model call's longest answer, in tokens. */
export const MAX_TOKENS = { min: 1, max: 1_000_000 } as const;
/** The seed that fixes the order a run posed until decided poses its vignettes in (an unsigned 32-bit integer). */
export const ORDER_SEED = { min: 0, max: 0xffffffff } as const;
/** Vignettes a run posed until decided poses between two looks. */
export const DECIDE_BATCH = { min: 1, max: 100_000 } as const;
/** Characters of a run's name. */
export const RUN_NAME_MAX = 200;
/** Characters of a run's notes. */
export const RUN_NOTES_MAX = 10_000;

/** What a form says of a value outside whole-number bounds: "a whole number from 1 to 10,000". */
export function wholeRangeText(bounds: { readonly min: number; readonly max: number }): string {
  return `a whole number from ${formatInt(bounds.min)} to ${formatInt(bounds.max)}`;
}
