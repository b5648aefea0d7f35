/**
 * The judges' calls summed per judge model, for one run or over every run: the cost accounting's
 * read of `judge_usage` (which the scoring transactions fill, each verdict's calls counted once).
 * A run's sums are a seek on the table's key (run first), prepared once per connection: the runs
 * list reads them for every run it shows.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import type { ModelUsage, RunId } from '../domain.js';
import type { Store } from './store.js';

export const JUDGE_COLUMNS = `judge AS model, SUM(calls) AS calls, SUM(input_tokens) AS inputTokens, SUM(output_tokens) AS outputTokens,
  SUM(cached_calls) AS cachedCalls, SUM(cached_input_tokens) AS cachedInputTokens, SUM(cached_output_tokens) AS cachedOutputTokens`;

function prepare(db: Database.Database) {
  return {
    all: db.prepare<[], ModelUsage>(`SELECT ${JUDGE_COLUMNS} FROM judge_usage GROUP BY judge ORDER BY judge`),
    run: db.prepare<[string], ModelUsage>(`SELECT ${JUDGE_COLUMNS} FROM judge_usage WHERE run_id = ? GROUP BY judge ORDER BY judge`),
    any: db.prepare<[], { any: number }>(`SELECT EXISTS (SELECT 1 FROM judge_usage WHERE calls > 0) AS any`),
  };
}

const prepared = new WeakMap<Database.Database, ReturnType<typeof prepare>>();

function statements(store: Store): ReturnType<typeof prepare> {
  let s = prepared.get(store.db);
  if (!s) prepared.set(store.db, (s = prepare(store.db)));
  return s;
}

/** Judge usage per judge model, sorted by model. */
export function judgeTotals(store: Store, runId?: RunId): ModelUsage[] {
  return runId === undefined ? statements(store).all.all() : statements(store).run.all(runId);
}

/** Whether any judge was ever called: judges are priced at the catalog's prices, so a reader loads the catalog then. */
export function anyJudgeCalls(store: Store): boolean {
  return statements(store).any.get()!.any === 1;
}
