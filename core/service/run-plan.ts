/**
 * Gathers what a plan is made from: the variance components of every pair of models — from a pilot
 * run's per-vignette epoch scores (the score matrix, a page at a time) or from guesses — and the
 * cost facts: mean tokens per call (the pilot's, else the models' history), the judges' calls and
 * dollars per record (the pilot's, or from guesses the judges named, priced from their history), the catalog's prices, and each provider's pace (its rpm, and
 * its concurrency over the mean latency the pilot saw). The plan itself is core/scoring/plan.ts.
 * Runs on: Node (core).
 */
import { estCostUsd } from '../common/cost.js';
import { PanoptesError } from '../domain.js';
import type { Catalog } from '../models/catalog.js';
import { nearestIds } from '../models/nearest-ids.js';
import { buildPlan, type JudgeCostFacts, type ModelCostFacts, type Plan, type PlanPair, type ProviderPace } from '../scoring/plan.js';
import { componentsFromGuess, componentsFromPilot, type PilotVignette } from '../scoring/power.js';
import type { ControlApi, ModelCost } from './contract.js';
import type { ValidInput } from './contract-dispatcher.js';

type PlanReads = Pick<ControlApi, 'getRun' | 'scoringStatus' | 'scoreMatrix' | 'stats' | 'responses' | 'checkManifest'>;

/** Calls in flight per provider when its catalog entry sets no maxConcurrency: a worker's call concurrency. */
const DEFAULT_IN_FLIGHT = 8;
/** Latency assumed for a provider no pilot measured. */
const ASSUMED_LATENCY_S = 1;
/** Records of the pilot read for its latencies. */
const LATENCY_SAMPLE = 2000;

function pairsOf(models: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < models.length; i++) for (let j = i + 1; j < models.length; j++) out.push([models[i]!, models[j]!]);
  return out;
}

/** Each model's epoch scores per vignette, from the pilot's score matrix. */
async function pilotScores(api: PlanReads, runId: string, scorer: string | undefined): Promise<Map<string, Map<string, number[]>>> {
  const byModel = new Map<string, Map<string, number[]>>();
  for (let cursor: number | null = 0; cursor !== null; ) {
    const page = await api.scoreMatrix({ runId, ...(scorer ? { scorer } : {}), sort: 'vignette', limit: 1000, cursor });
    for (const row of page.rows) {
      for (const c of row.cells) {
        const values = c.epochs.filter((v): v is number => v !== null);
        if (values.length === 0) continue;
        let m = byModel.get(c.model);
        if (!m) byModel.set(c.model, (m = new Map()));
        m.set(row.vignetteId, values);
      }
    }
    cursor = page.nextCursor;
  }
  return byModel;
}

function meanTokens(usage: ModelCost | undefined): { inputTokens: number | null; outputTokens: number | null } {
  const calls = (usage?.calls ?? 0);
  if (!usage || calls === 0) return { inputTokens: null, outputTokens: null };
  // Cached calls carry their tokens apart: a planned call may not be cached, so count them all.
  return { inputTokens: (usage.inputTokens + usage.cachedInputTokens) / calls, outputTokens: (usage.outputTokens + usage.cachedOutputTokens) / calls };
}

function providerOf(catalog: Catalog, model: string): string {
  return catalog.hosts(model)[0]?.provider ?? model;
}

/**
 * A judge asked once per record, its tokens per call from this data folder's history of its calls
 * (cached ones too: a planned call may not be cached) priced at the catalog's price; unknown
 * without a history.
 */
function judgeFromHistory(catalog: Catalog, model: string, history: readonly ModelCost[]): JudgeCostFacts {
  const { inputTokens, outputTokens } = meanTokens(history.find((h) => h.model === model));
  const facts = { model, provider: providerOf(catalog, model), callsPerRecord: 1 };
  if (inputTokens === null || outputTokens === null) return { ...facts, costPerRecord: null, tokensPerRecord: null };
  return { ...facts, tokensPerRecord: inputTokens + outputTokens, costPerRecord: estCostUsd({ inputTokens, outputTokens }, catalog.priceOf(model)) };
}

/** Refuses a model the catalog does not know: its price and pace would be made up. */
function refuseUnknown(catalog: Catalog, field: 'models' | 'judges', models: readonly string[]): void {
  const unknown = models.find((m) => !catalog.has(m));
  if (unknown !== undefined) throw new PanoptesError('invalid_input', `${field}: unknown model "${unknown}"; did you mean ${nearestIds(unknown, catalog.modelIds()).join(', ')}?`, { where: field });
}

/** Calls a second each provider takes: rpm/60, and its concurrency over its mean latency; the lower. */
function paceOf(catalog: Catalog, providers: Iterable<string>, latency: Map<string, number>): ProviderPace[] {
  const out: ProviderPace[] = [];
  for (const provider of new Set(providers)) {
    const cfg = catalog.data.providers[provider];
    const inFlight = cfg?.maxConcurrency ?? DEFAULT_IN_FLIGHT;
    const seconds = latency.get(provider) ?? ASSUMED_LATENCY_S;
    const byLatency = inFlight / Math.max(seconds, 1e-3);
    const byRpm = cfg?.rpm !== undefined ? cfg.rpm / 60 : Infinity;
    const basis = byRpm < byLatency ? `rpm ${cfg!.rpm}` : `${inFlight} in flight / ${seconds.toFixed(3)} s latency${latency.has(provider) ? '' : ' (assumed)'}`;
    out.push({ provider, callsPerSecond: Math.min(byLatency, byRpm), basis });
  }
  return out;
}

/** Mean latency per provider over the pilot's first records. */
async function pilotLatency(api: PlanReads, catalog: Catalog, runId: string): Promise<Map<string, number>> {
  const sums = new Map<string, { s: number; n: number }>();
  for (let cursor: number | null = 0, read = 0; cursor !== null && read < LATENCY_SAMPLE; ) {
    const page = await api.responses({ runId, limit: 500, cursor });
    for (const r of page.items) {
      if (r.cached) continue;
      const p = providerOf(catalog, r.model);
      const e = sums.get(p) ?? { s: 0, n: 0 };
      e.s += r.latencyMs / 1000;
      e.n++;
      sums.set(p, e);
    }
    read += page.items.length;
    cursor = page.nextCursor;
  }
  return new Map([...sums].map(([p, e]) => [p, e.s / e.n]));
}

export async function planSweep(api: PlanReads, catalog: Catalog, input: ValidInput<'plan'>): Promise<Plan> {
  const notes: string[] = [];
  const design = { delta: input.delta, power: input.power ?? 0.8, alpha: input.alpha ?? 0.05 };
  let models: string[];
  let pairs: PlanPair[];
  let source: string;
  let manifest: number | null = null;
  let usage: ModelCost[];
  let judges: JudgeCostFacts[] = [];
  let latency = new Map<string, number>();
  if (input.fromRun !== undefined) {
    if (input.judges !== undefined) throw new PanoptesError('invalid_input', "judges: a pilot run's judges are its own (the calls and dollars it spent on them); name judges only when planning from guesses", { where: 'judges' });
    const run = (await api.getRun({ runId: input.fromRun })).run;
    models = input.models ?? run.models;
    const missing = models.filter((m) => !run.models.includes(m));
    if (missing.length > 0) throw new PanoptesError('invalid_input', `models: pilot run ${run.id} did not run ${missing.join(', ')}`, { where: 'models' });
    const status = await api.scoringStatus({ runId: run.id });
    const scorer = input.scorer === undefined ? status.scorers[0] : [...status.scorers].reverse().find((s) => s.name === input.scorer);
    if (!scorer) throw new PanoptesError('not_found', `pilot run ${run.id} has no scorer${input.scorer ? ` "${input.scorer}"` : 's'}: score it first (panoptes score ${run.id} --scorers FILE)`, { where: 'scorer' });
    const scores = await pilotScores(api, run.id, scorer.name);
    const passFail = scorer.kind === 'pass_fail';
    pairs = pairsOf(models).map(([a, b]) => {
      const va = scores.get(a) ?? new Map<string, number[]>();
      const vb = scores.get(b) ?? new Map<string, number[]>();
      const both: PilotVignette[] = [];
      for (const [id, xa] of va) {
        const xb = vb.get(id);
        if (xb) both.push({ a: xa, b: xb });
      }
      return { a, b, components: componentsFromPilot(both, passFail, input.flipRate) };
    });
    source = `pilot run ${run.id} (scorer ${scorer.name}, ${run.epochs} epoch${run.epochs === 1 ? '' : 's'}, ${run.vignetteCount} vignettes)`;
    if (run.epochs === 1) {
      notes.push(input.flipRate !== undefined ? `the pilot has one epoch: the within-vignette variance is the flip rate given (${input.flipRate})` : 'the pilot has one epoch: the epochs\' own noise cannot be seen, so more epochs are planned as no help (give --flip-rate to plan them)');
    }
    manifest = run.vignetteCount;
    usage = (await api.stats({ runId: run.id })).models;
    // The records the pilot has (a pilot posed until decided has fewer than its full sweep): its judges judged those.
    const records = usage.reduce((n, u) => n + u.calls, 0) || run.vignetteCount * run.epochs * run.models.length;
    judges = status.judgeUsage.map((j) => ({
      model: j.model,
      provider: providerOf(catalog, j.model),
      callsPerRecord: (j.calls) / records,
      costPerRecord: j.estCostUsd / records,
      tokensPerRecord: (j.inputTokens + j.outputTokens + j.cachedInputTokens + j.cachedOutputTokens) / records,
    }));
    latency = await pilotLatency(api, catalog, run.id);
  } else {
    models = input.models ?? [];
    refuseUnknown(catalog, 'models', models);
    refuseUnknown(catalog, 'judges', input.judges ?? []);
    const twice = models.find((m, i) => models.indexOf(m) !== i);
    if (twice !== undefined) throw new PanoptesError('invalid_input', `models: "${twice}" is named twice (a plan compares different models)`, { where: 'models' });
    const acc = input.accuracy;
    if (acc === undefined) throw new PanoptesError('invalid_input', 'accuracy: without a pilot run (fromRun), give each model\'s guessed accuracy', { where: 'accuracy' });
    if (acc.length !== models.length) throw new PanoptesError('invalid_input', `accuracy: ${acc.length} values for ${models.length} models (one per model, in their order)`, { where: 'accuracy' });
    const f = input.flipRate ?? 0;
    const at = new Map(models.map((m, i) => [m, acc[i]!]));
    try {
      pairs = pairsOf(models).map(([a, b]) => ({ a, b, components: componentsFromGuess({ accuracyA: at.get(a)!, accuracyB: at.get(b)!, flipRateA: f, flipRateB: f, correlation: input.correlation ?? 0 }) }));
    } catch (err) {
      throw new PanoptesError('invalid_input', err instanceof Error ? err.message : String(err), { where: 'flipRate' });
    }
    source = `guesses (accuracy ${acc.join(', ')}, flip rate ${f}, correlation ${input.correlation ?? 0})`;
    if (input.flipRate === undefined) notes.push('no flip rate given: each vignette is taken to get the same verdict every epoch, so more epochs are planned as no help');
    const history = await api.stats();
    usage = history.models;
    judges = (input.judges ?? []).map((model) => judgeFromHistory(catalog, model, history.judges));
    const unpriced = judges.filter((j) => j.costPerRecord === null).map((j) => j.model);
    if (unpriced.length > 0) notes.push(`judge tokens and dollars unknown: no history has calls of ${[...new Set(unpriced)].join(', ')} (their calls are counted)`);
    if (input.judges === undefined) notes.push('judges are not counted: give the judge models (judges) to count their calls, or plan from a pilot run');
  }
  if (models.length < 2) throw new PanoptesError('invalid_input', `models: a plan compares at least two models, got ${models.length}`, { where: 'models' });
  if (input.manifestPath !== undefined) {
    const check = await api.checkManifest({ path: input.manifestPath });
    if (check.issueCount > 0) throw new PanoptesError('manifest_invalid', `${input.manifestPath}: ${check.issueCount} issues (the first: line ${check.issues[0]?.line}: ${check.issues[0]?.message})`, { where: 'manifestPath' });
    manifest = check.count;
  }
  const costs: ModelCostFacts[] = models.map((model) => ({ model, ...meanTokens(usage.find((u) => u.model === model)), price: catalog.priceOf(model), provider: providerOf(catalog, model) }));
  const unknown = costs.filter((c) => c.inputTokens === null).map((c) => c.model);
  if (unknown.length > 0) notes.push(`tokens and dollars unknown: no pilot or history has calls of ${unknown.join(', ')}`);
  const pace = paceOf(catalog, [...costs.map((c) => c.provider), ...judges.map((j) => j.provider)], latency);
  try {
    return buildPlan({ models, pairs, design, epochs: input.epochs ?? [1, 2, 3, 5], manifestVignettes: manifest, costs, judges, pace, source, notes });
  } catch (err) {
    if (err instanceof RangeError) throw new PanoptesError('invalid_input', err.message, { where: 'delta' });
    throw err;
  }
}
