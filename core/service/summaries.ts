/**
 * Run summaries and per-model cost: the store's usage priced with the catalog.
 * Runs on: Node (core).
 */
import { estCostUsd } from '../models/cost.js';
import type { ModelUsage, Run, RunId } from '../domain.js';
import type { Catalog } from '../models/catalog.js';
import type { Store } from '../store/store.js';
import type { ModelCost, RunSummary } from './contract.js';

/** Usage per model with estimated cost (and the cache's saving) from the catalog's prices (the flat fallback otherwise). */
export function modelCosts(store: Store, catalog: Catalog, runId?: RunId): ModelCost[] {
  return store.usageByModel(runId).map((u) => priceUsage(u, catalog));
}

/** One model's usage priced at the catalog's prices (the sweep's, or a judge's). */
export function priceUsage(u: ModelUsage, catalog: Catalog): ModelCost {
  const price = catalog.priceOf(u.model);
  return {
    ...u,
    estCostUsd: estCostUsd(u, price),
    savedCostUsd: estCostUsd({ inputTokens: u.cachedInputTokens, outputTokens: u.cachedOutputTokens }, price),
  };
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

export function summarizeRun(store: Store, catalog: Catalog, run: Run): RunSummary {
  return { ...run, ...usageTotals(modelCosts(store, catalog, run.id)) };
}
