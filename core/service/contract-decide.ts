/**
 * The contract's deciding part: the input of the gate (a base run against a head run, for CI) as
 * a zod schema, and its result's shape. Re-exported by the contract (contract.ts).
 * Runs on: Node (core); types shared with the renderer.
 */
import { z } from 'zod';
import type { GateLine, GateResult } from '../scoring/gate.js';

export type { GateLine, GateResult };

export const GateInputSchema = z
  .object({
    /** The run before the change. */
    base: z.string().min(1).max(100),
    /** The run after it, over the same manifest and models. */
    head: z.string().min(1).max(100),
    /** How much worse (head − base) is tolerated before the gate fails: worse means the 95 % interval lies wholly below −margin. */
    margin: z.number().min(0).max(1).optional(),
    /** The scorers to gate on (default: every scorer both runs have). */
    scorers: z.array(z.string().min(1).max(100)).min(1).max(100).optional(),
    reducer: z.enum(['mean', 'majority', 'max']).optional(),
  })
  .strict();
export type GateInput = z.infer<typeof GateInputSchema>;
