/**
 * A sweep's plan: for each number of epochs of the grid, the vignettes every planned pair of models
 * needs to detect Δ with the asked power (the design's n is the largest: every model answers the
 * same vignettes), what that design costs in calls, tokens and dollars (judges included) and how
 * long it takes under the providers' pacing, the minimum detectable difference at the manifest's own
 * size, the cheapest design that reaches the power, and whether the manifest is too small for Δ at
 * all. Pure: the service gathers the variance components and the cost facts (run-plan.ts).
 * Runs on: Node (core); pure; types shared with the renderer.
 */
import { estCostUsd, type Price } from '../common/cost.js';
import { minimumDetectable, vignettesNeeded, type Design, type VarianceComponents } from './power.js';

/** One model's cost facts: mean tokens per call (null when no pilot or history says) and its price. */
export interface ModelCostFacts {
  model: string;
  inputTokens: number | null;
  outputTokens: number | null;
  price: Price;
  /** Calls a second its provider allows (rpm/60, and its concurrency over the mean latency); shared by the provider's models. */
  provider: string;
}

/** A judge's cost per judged record (from a pilot, or its history): calls, tokens and dollars; null when unknown (no history). */
export interface JudgeCostFacts {
  model: string;
  provider: string;
  callsPerRecord: number;
  costPerRecord: number | null;
  tokensPerRecord: number | null;
}

/** A provider's pacing: calls a second it can take. */
export interface ProviderPace {
  provider: string;
  callsPerSecond: number;
  /** How the rate was found, for people: "rpm 60", "8 in flight / 1.2 s latency". */
  basis: string;
}

export interface PlanPair {
  a: string;
  b: string;
  components: VarianceComponents;
}

export interface PlanInput {
  models: string[];
  pairs: PlanPair[];
  design: Omit<Design, 'pairs'>;
  epochs: number[];
  /** The manifest's size: designs larger than it are not feasible; null when unknown. */
  manifestVignettes: number | null;
  costs: ModelCostFacts[];
  judges: JudgeCostFacts[];
  pace: ProviderPace[];
  /** Where the components came from, said in the plan: "pilot run r1 (scorer exact, 3 epochs)" or "guesses". */
  source: string;
  notes: string[];
}

export interface PlanDesign {
  epochs: number;
  /** Vignettes the design needs: the largest of its pairs'. */
  vignettes: number;
  /** Per pair, in the plan's pair order. */
  pair_vignettes: number[];
  /** McNemar (K = 1, pass/fail) or Miller's paired formula. */
  formula: 'mcnemar' | 'miller';
  /** At most the manifest's size (true when the size is unknown). */
  feasible: boolean;
  calls: number;
  judge_calls: number;
  /** Null when some model's mean tokens are unknown (no pilot, no history). */
  tokens: number | null;
  cost_usd: number | null;
  /** Expected wall time under the providers' pacing; null when a provider's pace is unknown. */
  wall_seconds: number | null;
  /** The cheapest feasible design (by dollars, else by calls). */
  cheapest: boolean;
}

export interface Plan {
  models: string[];
  pairs: { a: string; b: string; between: number; within: number; discordance: number | null }[];
  delta: number;
  power: number;
  alpha: number;
  /** α/m: Bonferroni over the m planned pairs (Holm's first and strictest step), two-sided. */
  alpha_per_pair: number;
  source: string;
  manifest_vignettes: number | null;
  designs: PlanDesign[];
  /** Per epochs of the grid: the largest of the pairs' minimum detectable differences at the manifest's size (null if unknown). */
  mde_at_manifest: { epochs: number; mde: number | null }[];
  /** True when no design of the grid reaches the power within the manifest. */
  too_small: boolean;
  /** Vignettes needed with unlimited epochs (the between-vignette part alone), for the too-small verdict. */
  vignettes_unlimited_epochs: number;
  pace: ProviderPace[];
  notes: string[];
}

function designOf(input: PlanInput, epochs: number): PlanDesign {
  const design = { ...input.design, pairs: Math.max(1, input.pairs.length) };
  const perPair = input.pairs.map((p) => vignettesNeeded(p.components, epochs, design));
  const n = Math.max(...perPair);
  const mcnemar = epochs === 1 && input.pairs.every((p) => p.components.discordance !== null);
  const records = n * epochs;
  const calls = records * input.models.length;
  let tokens: number | null = 0;
  let cost: number | null = 0;
  const providerCalls = new Map<string, number>();
  for (const c of input.costs) {
    providerCalls.set(c.provider, (providerCalls.get(c.provider) ?? 0) + records);
    if (c.inputTokens === null || c.outputTokens === null || tokens === null || cost === null) {
      tokens = null;
      cost = null;
      continue;
    }
    tokens += records * (c.inputTokens + c.outputTokens);
    cost += estCostUsd({ inputTokens: records * c.inputTokens, outputTokens: records * c.outputTokens }, c.price);
  }
  let judgeCalls = 0;
  for (const j of input.judges) {
    const k = Math.round(calls * j.callsPerRecord);
    judgeCalls += k;
    providerCalls.set(j.provider, (providerCalls.get(j.provider) ?? 0) + k);
    tokens = tokens === null || j.tokensPerRecord === null ? null : tokens + calls * j.tokensPerRecord;
    cost = cost === null || j.costPerRecord === null ? null : cost + calls * j.costPerRecord;
  }
  let wall: number | null = 0;
  for (const [provider, k] of providerCalls) {
    const pace = input.pace.find((p) => p.provider === provider);
    wall = pace && wall !== null ? Math.max(wall, k / pace.callsPerSecond) : null;
  }
  return {
    epochs,
    vignettes: n,
    pair_vignettes: perPair,
    formula: mcnemar ? 'mcnemar' : 'miller',
    feasible: input.manifestVignettes === null || n <= input.manifestVignettes,
    calls,
    judge_calls: judgeCalls,
    tokens: tokens === null ? null : Math.round(tokens),
    cost_usd: cost,
    wall_seconds: wall,
    cheapest: false,
  };
}

/** The largest of the pairs' minimum detectable differences at n vignettes (null if one cannot detect any). */
function worstDetectable(pairs: readonly PlanPair[], epochs: number, n: number, design: Design): number | null {
  let worst = 0;
  for (const p of pairs) {
    const mde = minimumDetectable(p.components, epochs, n, design);
    if (mde === null) return null;
    worst = Math.max(worst, mde);
  }
  return worst;
}

/** The plan of a sweep. */
export function buildPlan(input: PlanInput): Plan {
  if (input.pairs.length === 0) throw new RangeError('a plan needs at least one pair of models');
  if (!(input.design.delta > 0 && input.design.delta <= 1)) throw new RangeError(`delta must be in (0, 1], got ${input.design.delta}`);
  const m = input.pairs.length;
  const designs = input.epochs.map((k) => designOf(input, k));
  const feasible = designs.filter((d) => d.feasible);
  const key = (d: PlanDesign) => d.cost_usd ?? d.calls;
  const best = feasible.reduce<PlanDesign | null>((b, d) => (b === null || key(d) < key(b) ? d : b), null);
  if (best) best.cheapest = true;
  const design = { ...input.design, pairs: m };
  const unlimited = Math.max(...input.pairs.map((p) => Math.ceil(vignettesNeeded({ ...p.components, within: 0, discordance: null }, 1, design))));
  const notes = [...input.notes];
  const n = input.manifestVignettes;
  if (n !== null && !best) {
    notes.push(
      unlimited > n
        ? `the manifest is too small to detect ${input.design.delta} at all: ${n} vignettes, and even with unlimited epochs ${unlimited} are needed (add vignettes, or plan for a larger difference)`
        : `the manifest is too small for these designs: ${n} vignettes; more than ${Math.max(...input.epochs)} epochs would be needed (with unlimited epochs, ${unlimited} vignettes suffice)`,
    );
  }
  return {
    models: input.models,
    pairs: input.pairs.map((p) => ({ a: p.a, b: p.b, between: p.components.between, within: p.components.within, discordance: p.components.discordance })),
    delta: input.design.delta,
    power: input.design.power,
    alpha: input.design.alpha,
    alpha_per_pair: input.design.alpha / m,
    source: input.source,
    manifest_vignettes: n,
    designs,
    mde_at_manifest: input.epochs.map((k) => ({ epochs: k, mde: n === null ? null : worstDetectable(input.pairs, k, n, { ...input.design, pairs: m }) })),
    too_small: n !== null && !best,
    vignettes_unlimited_epochs: unlimited,
    pace: input.pace,
    notes,
  };
}
