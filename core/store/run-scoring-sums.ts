/**
 * A list of runs' scoring sums in two reads: the judges' usage per (run, judge model) and the
 * retries' per (run, candidate model), from the sums the scoring transactions keep (`judge_usage`,
 * `retry_usage`, both keyed by run first), for the runs a list shows (passed as one JSON
 * parameter), so listing a thousand runs costs two statements, not two thousand.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import type { ModelUsage, RunId } from '../domain.js';
import { USAGE_COLUMNS as RETRY_COLUMNS } from './attempt-store.js';
import { JUDGE_COLUMNS } from './judge-totals.js';
import type { Store } from './store.js';

export interface RunScoringSums {
  judges: ModelUsage[];
  retries: ModelUsage[];
}

type Row = ModelUsage & { runId: RunId };

function prepare(db: Database.Database) {
  const runs = `(SELECT value FROM json_each(?))`;
  return {
    judges: db.prepare<[string], Row>(`SELECT run_id AS runId, ${JUDGE_COLUMNS} FROM judge_usage WHERE run_id IN ${runs} GROUP BY run_id, judge ORDER BY run_id, judge`),
    retries: db.prepare<[string], Row>(
      `SELECT run_id AS runId, ${RETRY_COLUMNS} FROM retry_usage WHERE run_id IN ${runs} GROUP BY run_id, model HAVING SUM(calls) > 0 ORDER BY run_id, model`,
    ),
  };
}

const prepared = new WeakMap<Database.Database, ReturnType<typeof prepare>>();

/** Each run's judge and retry usage, per model sorted by model; a run without any has empty lists. */
export function runScoringSums(store: Store, runIds: readonly RunId[]): Map<RunId, RunScoringSums> {
  let s = prepared.get(store.db);
  if (!s) prepared.set(store.db, (s = prepare(store.db)));
  const out = new Map<RunId, RunScoringSums>(runIds.map((id) => [id, { judges: [], retries: [] }]));
  if (runIds.length === 0) return out;
  const ids = JSON.stringify(runIds);
  for (const { runId, ...u } of s.judges.all(ids)) out.get(runId)?.judges.push(u);
  for (const { runId, ...u } of s.retries.all(ids)) out.get(runId)?.retries.push(u);
  return out;
}
