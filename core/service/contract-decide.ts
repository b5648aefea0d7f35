/**
 * The contract's deciding part: the inputs of the gate (a base run against a head run, for CI) and
 * of the plan (power and cost before a sweep) and of the anytime-valid decision over a run as zod
 * schemas, and their results' shapes. Re-exported by the contract (contract.ts).
 * Runs on: Node (core); types shared with the renderer.
 */
import { z } from 'zod';
import type { GateLine, GateResult } from '../scoring/gate.js';
import type { DecisionReport, PairDecision } from '../scoring/adaptive-decision.js';
import type { Plan, PlanDesign } from '../scoring/plan.js';

export type { DecisionReport, GateLine, GateResult, PairDecision, Plan, PlanDesign };

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

const Share = z.number().min(0).max(1);

export const PlanInputSchema = z
  .object({
    /** The models to compare (every pair is planned); default with a pilot: the pilot's. */
    models: z.array(z.string().min(1).max(200)).min(2).max(50).optional(),
    /** A pilot run: its per-vignette differences and epoch variance, its tokens and its judges' cost. */
    fromRun: z.string().min(1).max(100).optional(),
    /** The pilot's scorer (default: its first). */
    scorer: z.string().min(1).max(100).optional(),
    /** Without a pilot: each model's guessed accuracy, in the models' order. */
    accuracy: z.array(Share).min(2).max(50).optional(),
    /** The chance two epochs of one vignette disagree (pass/fail); without it epochs are planned as no help. */
    flipRate: Share.optional(),
    /** Guesses: the correlation across vignettes of the models' chances of passing (default 0). */
    correlation: z.number().min(-1).max(1).optional(),
    /** The difference to detect. */
    delta: z.number().gt(0).max(1),
    power: z.number().gt(0).lt(1).optional(),
    alpha: z.number().gt(0).lt(1).optional(),
    /** The grid's epochs (default 1, 2, 3, 5). */
    epochs: z.array(z.number().int().min(1).max(1000)).min(1).max(20).optional(),
    /** The manifest the sweep will run: its size bounds the designs (default: the pilot's size). */
    manifestPath: z.string().min(1).max(4096).optional(),
  })
  .strict();
export type PlanInput = z.infer<typeof PlanInputSchema>;

export const DecideInputSchema = z
  .object({
    runId: z.string().min(1).max(100),
    /** The scorer (default: the run's first); its newest version. */
    scorer: z.string().min(1).max(100).optional(),
    /** Stop a pair as equivalent once its interval lies inside ±margin (default 0: never). */
    margin: z.number().min(0).lt(1).optional(),
    /** The order's seed (default 1): the order is fixed by it before any answer is read. */
    seed: z.number().int().min(0).max(0xffffffff).optional(),
    /** Vignettes per batch between two looks (default 10). */
    batch: z.number().int().min(1).max(100_000).optional(),
    alpha: z.number().gt(0).lt(1).optional(),
  })
  .strict();
export type DecideInput = z.infer<typeof DecideInputSchema>;
