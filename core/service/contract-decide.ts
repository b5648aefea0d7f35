/**
 * The contract's deciding part: the inputs of the gate (a base run against a head run, for CI) and
 * of the plan (power and cost before a sweep) and of the anytime-valid decision over a run as zod
 * schemas, and their results' shapes. Re-exported by the contract (contract.ts).
 * Runs on: Node (core); types shared with the renderer.
 */
import { z } from 'zod';
import { DECIDE_BATCH, ORDER_SEED } from '../common/input-bounds.js';
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
    /**
     * Without a pilot: the judge models the sweep's judge scorers will ask, each once per record (a
     * judge in two scorers is listed twice); their tokens and dollars per call from this data
     * folder's history of their calls. A pilot's judges are its own.
     */
    judges: z.array(z.string().min(1).max(200)).min(1).max(50).optional(),
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
    seed: z.number().int().min(ORDER_SEED.min).max(ORDER_SEED.max).optional(),
    /** Vignettes per batch between two looks (default 10). */
    batch: z.number().int().min(DECIDE_BATCH.min).max(DECIDE_BATCH.max).optional(),
    alpha: z.number().gt(0).lt(1).optional(),
    /** A budget of the sweep's calls: the replay stops before a batch that would pass it (a run posed until decided: its own). */
    maxCalls: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
  })
  .strict();
export type DecideInput = z.infer<typeof DecideInputSchema>;

/**
 * A run posed until decided (`createRun`'s `untilDecided`): its vignettes in the order of
 * `orderSeed`, `batch` at a time, to the models still in contention, until every pair is decided
 * or equivalent or the manifest is spent. Defaults filled in here are what the run stores.
 */
export const UntilDecidedInputSchema = z
  .object({
    /** The scorer the pairs are decided on (default: the run's first). */
    scorer: z.string().min(1).max(100).optional(),
    /** The chance of any wrong decision, split over the pairs (default 0.05). */
    alpha: z.number().gt(0).lt(1).default(0.05),
    /** Stop a pair as equivalent once its interval lies inside ±margin (default 0: never). */
    margin: z.number().min(0).lt(1).default(0),
    /** The order's seed (default 1); fixed before any answer is read. */
    orderSeed: z.number().int().min(ORDER_SEED.min).max(ORDER_SEED.max).default(1),
    /** Vignettes posed between two looks (default 10). */
    batch: z.number().int().min(DECIDE_BATCH.min).max(DECIDE_BATCH.max).default(10),
    /** A budget of the sweep's calls: a batch opens only while it fits beside the calls before it (absent: the manifest bounds the run). */
    maxCalls: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
  })
  .strict();

/** Jobs a run posed until decided may have: every one runs at once, as each batch waits for all of them (a local worker takes 64). */
export const UNTIL_DECIDED_MAX_JOBS = 64;

/** What a schema of one field cannot check of a run posed until decided: two models, a scorer, its jobs all at once. */
export function refineUntilDecided(
  input: { models: string[]; epochs: number; scorers?: { scorers: { name: string }[] } | undefined; untilDecided?: { scorer?: string | undefined; batch: number; maxCalls?: number | undefined } | undefined },
  ctx: z.RefinementCtx,
): void {
  const u = input.untilDecided;
  if (!u) return;
  const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: z.ZodIssueCode.custom, path, message });
  if (input.models.length < 2) issue(['models'], 'a run posed until decided compares at least two models');
  const names = (input.scorers?.scorers ?? []).map((s) => s.name);
  if (names.length === 0) issue(['scorers'], 'a run posed until decided needs scorers: its pairs are decided on a scorer');
  else if (u.scorer !== undefined && !names.includes(u.scorer)) issue(['untilDecided', 'scorer'], `no scorer "${u.scorer}" in the run's scorers (${names.join(', ')})`);
  const firstBatch = input.models.length * u.batch * input.epochs;
  if (u.maxCalls !== undefined && u.maxCalls < firstBatch) {
    issue(['untilDecided', 'maxCalls'], `a budget of ${u.maxCalls} calls is less than the first batch (${input.models.length} models × ${u.batch} vignettes × ${input.epochs} epochs = ${firstBatch}): nothing could be posed`);
  }
  if (input.models.length * input.epochs > UNTIL_DECIDED_MAX_JOBS) {
    issue(['epochs'], `a run posed until decided runs all its jobs at once: ${input.models.length} models × ${input.epochs} epochs is more than ${UNTIL_DECIDED_MAX_JOBS}`);
  }
}

