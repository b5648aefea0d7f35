/**
 * Run summaries and per-model cost: the store's usage priced at the prices each run was created
 * with (kept with the run, so a later catalog, or none, never changes what a run cost), and at the
 * catalog's for runs made before prices were kept.
 * Runs on: Node (core).
 */
import { estCostUsd } from '../common/cost.js';
import type { ModelUsage, Run, RunId, RunPrices, StoredResponse } from '../domain.js';
import type { Catalog } from '../models/catalog.js';
import type { Price } from '../common/cost.js';
import type { AttemptStore } from '../store/attempt-store.js';
import { Turns } from '../scoring/report-cells.js';
import { sweepUsage } from '../store/billed-calls.js';
import { judgeTotals } from '../store/judge-totals.js';
import { runScoringSums, type RunScoringSums } from '../store/run-scoring-sums.js';
import type { Store } from '../store/store.js';
import type { ModelCost, PricedResponse, RunSummary, StatsReport } from './contract.js';

/** The prices a new run of `models` is costed at, for good. */
/** Where a price comes from when a run kept none: the catalog, or anything that prices a model as it does. */
export type PriceList = Pick<Catalog, 'priceOf'>;

export function pricesForRun(catalog: PriceList, models: readonly string[]): RunPrices {
  return Object.fromEntries(models.map((m) => [m, catalog.priceOf(m)]));
}

function priced(u: ModelUsage, price: Price): ModelCost {
  return {
    ...u,
    estCostUsd: estCostUsd(u, price),
    savedCostUsd: estCostUsd({ inputTokens: u.cachedInputTokens, outputTokens: u.cachedOutputTokens }, price),
  };
}

/** Usage per model with estimated cost (and the cache's saving), for one run or over every run. */
export function modelCosts(store: Store, catalog: PriceList, runId?: RunId): ModelCost[] {
  if (runId !== undefined) {
    const prices = store.queries.runPrices(runId);
    return store.queries.usageByModel(runId).map((u) => priced(u, prices?.[u.model] ?? catalog.priceOf(u.model)));
  }
  return sumPerModel(catalog, store.queries.usageByRunAndModel());
}

/**
 * The candidate models' calls made to retry hard fails (retryOnHardFail), priced like the sweep's
 * at each run's kept prices, but apart from it: a retry is an extra call the sweep did not plan.
 */
export function retryCosts(store: Store, attempts: AttemptStore, catalog: PriceList, runId?: RunId): ModelCost[] {
  if (runId !== undefined) {
    const prices = store.queries.runPrices(runId);
    return attempts.usage(runId).map((u) => priced(u, prices?.[u.model] ?? catalog.priceOf(u.model)));
  }
  const prices = new Map<RunId, RunPrices | null>();
  const rows = attempts.usageByRun().map((u) => {
    if (!prices.has(u.runId)) prices.set(u.runId, store.queries.runPrices(u.runId));
    return { ...u, prices: prices.get(u.runId)! };
  });
  return sumPerModel(catalog, rows);
}

/** Each run's usage of a model at the run's own prices, summed per model, sorted by model. */
function sumPerModel(catalog: PriceList, rows: Iterable<ModelUsage & { runId: RunId; prices: RunPrices | null }>): ModelCost[] {
  const byModel = new Map<string, ModelCost>();
  for (const u of rows) {
    const { runId: _run, prices, ...usage } = u;
    const c = priced(usage, prices?.[u.model] ?? catalog.priceOf(u.model));
    const sum = byModel.get(u.model);
    if (!sum) {
      byModel.set(u.model, c);
      continue;
    }
    for (const k of ['inputTokens', 'outputTokens', 'calls', 'cachedCalls', 'cachedInputTokens', 'cachedOutputTokens', 'estCostUsd', 'savedCostUsd'] as const) {
      sum[k] += c[k];
    }
  }
  return [...byModel.values()].sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
}

/**
 * Each record's call priced as the run's accounting prices it: a billed call at its tokens, a
 * cached one at nothing, with its tokens as the saving. The run's kept prices, so the catalog of
 * the day (or none) does not change them.
 */
export function priceResponses(store: Store, catalog: PriceList, runId: RunId, records: StoredResponse[]): PricedResponse[] {
  const prices = store.queries.runPrices(runId);
  // The page's records are its own: priced in place, not copied (copying 1,000 cost ~8 ms).
  return records.map((r) => {
    const cost = estCostUsd(r.usage, prices?.[r.model] ?? catalog.priceOf(r.model));
    return Object.assign(r, { estCostUsd: r.cached ? 0 : cost, savedCostUsd: r.cached ? cost : 0 });
  });
}

/** One model's usage priced at the catalog's prices (the sweep's, or a judge's). */
export function priceUsage(u: ModelUsage, catalog: PriceList): ModelCost {
  return priced(u, catalog.priceOf(u.model));
}

/** The totals over models that a run summary and a stats report both carry. */
export function usageTotals(usage: readonly ModelCost[]) {
  const sum = (pick: (u: ModelCost) => number) => usage.reduce((s, u) => s + pick(u), 0);
  return {
    inputTokens: sum((u) => u.inputTokens),
    outputTokens: sum((u) => u.outputTokens),
    calls: sum((u) => u.calls),
    estCostUsd: sum((u) => u.estCostUsd),
    cachedCalls: sum((u) => u.cachedCalls),
    cachedInputTokens: sum((u) => u.cachedInputTokens),
    cachedOutputTokens: sum((u) => u.cachedOutputTokens),
    savedCostUsd: sum((u) => u.savedCostUsd),
  };
}

/** The sweep's cost, the judges' and the retries', each apart, and their sum: what a run (or every run) cost in all. */
export function costWithScoring(sweep: readonly ModelCost[], judges: readonly ModelCost[], retries: readonly ModelCost[]) {
  const cost = (usage: readonly ModelCost[]) => usage.reduce((s, u) => s + u.estCostUsd, 0);
  const parts = { sweep: cost(sweep), judges: cost(judges), retries: cost(retries) };
  return { ...parts, total: parts.sweep + parts.judges + parts.retries };
}

/** Tokens, calls and cost per model with their totals, for one run or over every run; judges' calls and retries of hard fails apart, and in the all-in total. */
export function statsReport(store: Store, attempts: AttemptStore, catalog: PriceList, runId?: RunId): StatsReport {
  const models = modelCosts(store, catalog, runId);
  const t = usageTotals(models);
  const retries = retryCosts(store, attempts, catalog, runId);
  const judges = judgeTotals(store, runId).map((u) => priceUsage(u, catalog));
  const all = costWithScoring(models, judges, retries);
  const sweepCalls = sweepUsage(store, runId).map((u) => {
    const recorded = models.find((m) => m.model === u.model)?.calls ?? 0;
    return { model: u.model, asked: u.calls, unrecorded: Math.max(0, u.calls - recorded) };
  });
  return {
    models,
    retries,
    judges,
    totalJudgeCostUsd: all.judges,
    totalRetryCostUsd: all.retries,
    totalWithScoringUsd: all.total,
    totalEstCostUsd: t.estCostUsd,
    totalInputTokens: t.inputTokens,
    totalOutputTokens: t.outputTokens,
    totalCalls: t.calls,
    totalCachedCalls: t.cachedCalls,
    totalCachedInputTokens: t.cachedInputTokens,
    totalCachedOutputTokens: t.cachedOutputTokens,
    totalSavedCostUsd: t.savedCostUsd,
    sweepCalls,
    totalSweepCallsAsked: sweepCalls.reduce((n, c) => n + c.asked, 0),
    totalSweepCallsUnrecorded: sweepCalls.reduce((n, c) => n + c.unrecorded, 0),
  };
}

/**
 * Runs as lists show them: counts, the sweep's usage and cost, and what judges and retries cost on
 * top. Every figure is read from sums the store keeps per run (the jobs' counters, `judge_usage`,
 * `retry_usage`; the scoring sums in two reads for the whole list), never from the records.
 */
export function summarizeRuns(store: Store, catalog: PriceList, runs: readonly Run[]): RunSummary[] {
  const scoring = runScoringSums(store, runs.map((r) => r.id));
  return runs.map((run) => summaryOf(store, catalog, run, scoring.get(run.id)!));
}

/**
 * The same, handing the event loop back between runs once a slice of time is spent: a list of
 * 1,000 runs takes some hundred milliseconds of reads, which the app's main process must not hold
 * in one step.
 */
export async function summarizeRunsInTurns(store: Store, catalog: PriceList, runs: readonly Run[]): Promise<RunSummary[]> {
  const scoring = runScoringSums(store, runs.map((r) => r.id));
  const turns = new Turns();
  const summaries: RunSummary[] = [];
  for (const run of runs) {
    if (turns.due(RUN_WEIGHT)) await turns.take();
    summaries.push(summaryOf(store, catalog, run, scoring.get(run.id)!));
  }
  return summaries;
}

/** A run's summary costs a handful of reads (about 0.2 ms): `Turns` looks at the clock every 16 of them. */
const RUN_WEIGHT = 64;

function summaryOf(store: Store, catalog: PriceList, run: Run, sums: RunScoringSums): RunSummary {
  const sweep = modelCosts(store, catalog, run.id);
  const prices = sums.retries.length > 0 ? store.queries.runPrices(run.id) : null;
  const retries = sums.retries.map((u) => priced(u, prices?.[u.model] ?? catalog.priceOf(u.model)));
  const all = costWithScoring(sweep, sums.judges.map((u) => priceUsage(u, catalog)), retries);
  return {
    ...run,
    failedVignettes: store.queries.vignetteFailureCount(run.id),
    waitingForHost: store.queries.waitingForHost(run.id),
    ...usageTotals(sweep),
    judgeCostUsd: all.judges,
    retryCostUsd: all.retries,
    totalWithScoringUsd: all.total,
  };
}

export function summarizeRun(store: Store, catalog: PriceList, run: Run): RunSummary {
  return summarizeRuns(store, catalog, [run])[0]!;
}
