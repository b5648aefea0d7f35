/**
 * Schema version 11: the calls behind a staged template's record: every stage's answer, fan-out
 * item and judge round, with its tokens and latency.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 11,
  description: "the calls behind a staged template's record: each stage's answers, tokens and latency",
  up: `
      -- One call of a staged record, landed in the transaction that lands the record (job_id,
      -- vignette_idx): a record and its stages are stored together or not at all. call_idx is the
      -- call's place in the record's chain; item is the fan-out item (NULL without fan-out); round
      -- the judge round (1 without a judge loop).
      CREATE TABLE stage_answers (
        job_id           INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        vignette_idx     INTEGER NOT NULL,
        call_idx         INTEGER NOT NULL,
        stage            TEXT NOT NULL,
        item             INTEGER,
        round            INTEGER NOT NULL,
        response         TEXT NOT NULL,
        input_tokens     INTEGER NOT NULL,
        output_tokens    INTEGER NOT NULL,
        cached_tokens    INTEGER,
        reasoning_tokens INTEGER,
        latency_ms       INTEGER NOT NULL,
        host             TEXT NOT NULL,
        cached           INTEGER NOT NULL,
        PRIMARY KEY (job_id, vignette_idx, call_idx)
      ) WITHOUT ROWID;
  `,
};
