/**
 * Schema version 16: the calls of a staged template's vignette stored as each one finishes, before
 * the record lands, so a vignette interrupted mid-template resumes from its first unfinished stage.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 16,
  description: "a staged vignette's calls stored as they finish, for resuming mid-template",
  up: `
      -- One finished call of a staged vignette whose record has not landed yet: the same columns
      -- as stage_answers. Written (fenced, for the job's current attempt) when the call answers;
      -- the transaction that lands the record moves its rows to stage_answers. A resumed job
      -- reads them back and poses only the calls after them.
      CREATE TABLE finished_stages (
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
