/**
 * The sampling parameters a model call may carry, as a schema: every boundary that receives them
 * (the contract's createRun, a remote worker's assign frame) validates against this one.
 * Runs on: Node (core).
 */
import { z } from 'zod';
import { MAX_TOKENS, TEMPERATURE } from '../common/input-bounds.js';

export const SamplingSchema = z
  .object({
    temperature: z.number().min(TEMPERATURE.min).max(TEMPERATURE.max).optional(),
    topP: z.number().gt(0).max(1).optional(),
    maxTokens: z.number().int().positive().max(MAX_TOKENS.max).optional(),
    seed: z.number().int().optional(),
    stop: z.array(z.string()).max(16).optional(),
    reasoningEffort: z.enum(['low', 'medium', 'high']).optional(),
    /** Anthropic's floor for a thinking budget is 1,024 tokens. */
    thinkingBudget: z.number().int().min(1024).max(1_000_000).optional(),
  })
  .strict();
