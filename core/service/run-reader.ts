/**
 * The runs of a data folder and what they cost, read from the store and the catalog alone: what
 * `panoptes runs` and `panoptes stats` print. Opening the engine would also build the router, the
 * providers, the workers, the scheduler and scoring, which these reads never use and which take
 * most of a command's start-up. The figures are the service's own (`summarizeRun`, `statsReport`),
 * so a reader and the engine never disagree.
 * Runs on: Node (core).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { PanoptesError, type RunId } from '../domain.js';
import { databasePath } from '../paths.js';
import { AttemptStore } from '../store/attempt-store.js';
import { anyJudgeCalls } from '../store/judge-totals.js';
import { Store } from '../store/store.js';
import type { RunSummary, StatsReport } from './contract.js';
import { FALLBACK_PRICE } from '../common/cost.js';
import { statsReport, summarizeRuns, type PriceList } from './summaries.js';

export interface RunReader {
  /** The newest runs first, at most `limit`. */
  listRuns(limit: number): RunSummary[];
  /** Usage per model over every run, or over one (`not_found` when there is no such run). */
  stats(runId?: RunId): StatsReport;
  close(): void;
}

export async function openRunReader(opts: { dataDir: string; catalogPaths?: string[] }): Promise<RunReader> {
  mkdirSync(opts.dataDir, { recursive: true });
  // Only reads: a database that exists is opened read-only, so a read-only data folder works too.
  const path = databasePath(opts.dataDir);
  const store = new Store(path, { readonly: existsSync(path) });
  // Runs keep the prices they were made with; only runs older than that, and judges' calls (priced
  // at the judge's catalog price), are priced by the catalog, which is loaded (and validated) then alone.
  let catalog: PriceList = { priceOf: () => FALLBACK_PRICE };
  if (store.queries.hasRunsWithoutPrices() || anyJudgeCalls(store)) {
    const { loadCatalog } = await import('./load-catalog.js');
    catalog = loadCatalog(opts.dataDir, opts.catalogPaths);
  }
  const attempts = new AttemptStore(store);
  return {
    listRuns: (limit) => summarizeRuns(store, catalog, store.queries.listRuns({ limit })),
    stats(runId) {
      if (runId !== undefined && !store.queries.getRun(runId)) throw new PanoptesError('not_found', `no run "${runId}"`, { where: 'runId' });
      return statsReport(store, attempts, catalog, runId);
    },
    close: () => store.close(),
  };
}
