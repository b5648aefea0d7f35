/**
 * Schema version 7: judge usage: the judges' calls and tokens per (run, scorer version, judge), apart from the sweep's.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 7,
  description: "judge usage: the judges' calls and tokens per (run, scorer version, judge), apart from the sweep's",
  up: `
      -- Added in the same transaction as the scores they paid for, so counted exactly once. Tokens of
      -- calls the prompt cache answered are kept apart, unbilled, as for the sweep's records.
      CREATE TABLE judge_usage (
        run_id              TEXT NOT NULL REFERENCES runs (id),
        scorer_id           INTEGER NOT NULL,
        judge               TEXT NOT NULL,
        calls               INTEGER NOT NULL,
        input_tokens        INTEGER NOT NULL,
        output_tokens       INTEGER NOT NULL,
        cached_calls        INTEGER NOT NULL,
        cached_input_tokens INTEGER NOT NULL,
        cached_output_tokens INTEGER NOT NULL,
        PRIMARY KEY (run_id, scorer_id, judge)
      ) WITHOUT ROWID;
    `,
};
