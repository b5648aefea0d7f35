/**
 * The fields every scorer definition has besides its type-specific ones: a name, a severity, and
 * how many times a hard fail is retried.
 * The scoring file's schema and the layers' own definition schemas (the judge's) share them.
 * Runs on: Node (core).
 */
import { z } from 'zod';

/** A scorer's name: what reports, exports and the CLI's `--scorer` call it. */
export const ScorerName = z
  .string()
  .min(1, 'a name')
  .max(100)
  .regex(/^[\w.-]+$/, 'letters, digits, _ . - only');

export const commonDefinitionFields = {
  name: ScorerName,
  /** How a failed check counts: hard makes the response unacceptable, soft only flags it (default hard). */
  severity: z.enum(['hard', 'soft']).optional(),
  /**
   * On a hard fail, pose the vignette to the same model again, up to this many times, until an
   * answer passes. Every attempt is kept; statistics use the first unless asked for the final one.
   */
  retryOnHardFail: z.number().int('a whole number of retries, 1 to 5').min(1, 'at least 1 retry').max(5, 'at most 5 retries').optional(),
};
