/**
 * Schema version 9: retries on hard fails: the extra attempts a scorer asked for, their scores, and their calls apart from the sweep.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 9,
  description: 'retries on hard fails: the extra attempts a scorer asked for, their scores, and their calls apart from the sweep',
  up: `
      -- A retry of a record (seq, attempt 1) that a scorer version found a hard fail: the same
      -- vignette posed to the same model again. Written in the transaction of the score page that
      -- asked for it, so a kill -9 keeps all of a page's attempts or none; the key refuses a second
      -- attempt with the same number.
      CREATE TABLE retry_attempts (
        scorer_id     INTEGER NOT NULL,
        seq           INTEGER NOT NULL,           -- the sweep's record: attempt 1
        attempt       INTEGER NOT NULL CHECK (attempt >= 2),
        response      TEXT NOT NULL,
        input_tokens  INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        latency_ms    INTEGER NOT NULL,
        host          TEXT NOT NULL,
        finished_at   INTEGER NOT NULL,
        PRIMARY KEY (scorer_id, seq, attempt)
      ) WITHOUT ROWID;

      -- The scorer's verdicts on an attempt, like scores (severity 0 none, 1 soft, 2 hard). An
      -- attempt that could not be scored has none.
      CREATE TABLE attempt_scores (
        scorer_id   INTEGER NOT NULL,
        seq         INTEGER NOT NULL,
        attempt     INTEGER NOT NULL,
        judge       INTEGER NOT NULL,
        value       REAL NOT NULL,
        passed      INTEGER,
        severity    INTEGER NOT NULL,
        explanation TEXT,
        PRIMARY KEY (scorer_id, seq, attempt, judge)
      ) WITHOUT ROWID;
      -- Exports read the retries of a range of records beside their scores.
      CREATE INDEX attempt_scores_by_seq ON attempt_scores (seq);

      -- The retries' calls per (run, scorer version, model): the candidate's calls, accounted apart
      -- from the sweep's (jobs) and the judges' (judge_usage). Retries never use the prompt cache.
      CREATE TABLE retry_usage (
        run_id        TEXT NOT NULL REFERENCES runs (id),
        scorer_id     INTEGER NOT NULL,
        model         TEXT NOT NULL,
        calls         INTEGER NOT NULL,
        input_tokens  INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        PRIMARY KEY (run_id, scorer_id, model)
      ) WITHOUT ROWID;
    `,
};
