/**
 * Schema version 6: scoring: scorer versions, the scorers attached to each run with their durable progress, and scores.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 6,
  description: 'scoring: scorer versions, the scorers attached to each run with their durable progress, and scores',
  up: `
      -- One row per scorer version (a hash of its whole definition), shared by every run scored with it.
      CREATE TABLE scorers (
        id         INTEGER PRIMARY KEY,
        version    TEXT NOT NULL UNIQUE,
        name       TEXT NOT NULL,
        kind       TEXT NOT NULL CHECK (kind IN ('pass_fail','graded')),
        layer      TEXT NOT NULL CHECK (layer IN ('rule','plugin','judge')),
        judges     TEXT NOT NULL,                -- JSON array of judge models, in order
        definition TEXT NOT NULL                 -- JSON, as the scoring file gave it
      );

      -- The scoring work of a run: every record with seq <= scored_seq has its scores. A lease
      -- (owner, lease_until) makes one process at a time score a (run, scorer), so no judge call is
      -- made twice; the cursor and the scores commit together, so a kill -9 loses no score and
      -- makes none twice.
      CREATE TABLE run_scorers (
        run_id       TEXT NOT NULL REFERENCES runs (id),
        scorer_id    INTEGER NOT NULL REFERENCES scorers (id),
        position     INTEGER NOT NULL,           -- the order scorers were attached in
        scored_seq   INTEGER NOT NULL DEFAULT 0,
        done_count   INTEGER NOT NULL DEFAULT 0, -- records scored
        failed_count INTEGER NOT NULL DEFAULT 0, -- records the scorer could not score (a judge call kept failing)
        owner        TEXT,
        lease_until  INTEGER,
        PRIMARY KEY (run_id, scorer_id)
      ) WITHOUT ROWID;

      -- One row per (scorer version, record, judge): integers but the value, and an explanation
      -- only where a check failed or a judge spoke. judge indexes the scorer's judges (0 for rules).
      -- severity: 0 none, 1 soft, 2 hard. failed: the scorer could not score this record.
      CREATE TABLE scores (
        scorer_id   INTEGER NOT NULL,
        seq         INTEGER NOT NULL,
        judge       INTEGER NOT NULL,
        value       REAL NOT NULL,
        passed      INTEGER,
        severity    INTEGER NOT NULL,
        explanation TEXT,
        failed      INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (scorer_id, seq, judge)
      ) WITHOUT ROWID;
    `,
};
