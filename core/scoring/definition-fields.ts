/**
 * The fields every scorer definition has besides its type-specific ones: a name and a severity.
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
};
