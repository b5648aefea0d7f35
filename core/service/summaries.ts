/**
 * Run summaries and per-model cost: the store's usage priced with the catalog.
 * Runs on: Node (core).
 */
import { estCostUsd } from '../models/cost.js';
import type { Run, RunId } from '../domain.js';
import type { Catalog } from '../models/catalog.js';
import type { Store } from '../store/store.js';
import type { ModelCost, RunSummary } from './contract.js';

/** Usage per model with estimated cost from the catalog's prices (the flat fallback otherwise). */
export function modelCosts(store: Store, catalog: Catalog, runId?: RunId): ModelCost[] {
  return store.usageByModel(runId).map((u) => ({ ...u, estCostUsd: estCostUsd(u, catalog.priceOf(u.model)) }));
}

export function summarizeRun(store: Store, catalog: Catalog, run: Run): RunSummary {
  const usage = modelCosts(store, catalog, run.id);
  return {
    ...run,
    inputTokens: usage.reduce((s, u) => s + u.inputTokens, 0),
    outputTokens: usage.reduce((s, u) => s + u.outputTokens, 0),
    calls: usage.reduce((s, u) => s + u.calls, 0),
    estCostUsd: usage.reduce((s, u) => s + u.estCostUsd, 0),
  };
}
