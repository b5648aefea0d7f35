/**
 * Schema version 1: runs, staged vignettes, jobs, responses.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 1,
  description: 'runs, staged vignettes, jobs, responses',
  up: `
      CREATE TABLE runs (
        id             TEXT PRIMARY KEY,
        manifest_path  TEXT NOT NULL,
        models         TEXT NOT NULL,             -- JSON array of logical model ids
        epochs         INTEGER NOT NULL CHECK (epochs >= 1),
        vignette_count INTEGER NOT NULL,
        status         TEXT NOT NULL CHECK (status IN ('queued','running','done','failed','cancelled')),
        job_count      INTEGER NOT NULL,
        done_count     INTEGER NOT NULL DEFAULT 0,
        failed_count   INTEGER NOT NULL DEFAULT 0,
        options        TEXT NOT NULL,             -- JSON RunOptions
        created_at     INTEGER NOT NULL,
        started_at     INTEGER,
        finished_at    INTEGER,
        error          TEXT,
        owner          TEXT,                      -- scheduler holding the run: host:pid:nonce
        lease_until    INTEGER                    -- the owner renews this while it works
      );
      CREATE INDEX runs_by_status ON runs (status, created_at);
      CREATE INDEX runs_by_created ON runs (created_at);

      -- A run's vignettes, copied from its manifest at creation so the run does not depend on the file.
      CREATE TABLE vignettes (
        run_id      TEXT NOT NULL,
        idx         INTEGER NOT NULL,
        vignette_id TEXT NOT NULL,
        prompt      TEXT NOT NULL,
        system      TEXT,
        target      TEXT,
        metadata    TEXT,
        PRIMARY KEY (run_id, idx)
      ) WITHOUT ROWID;

      -- Runs whose vignettes are being copied in; cleared when the run row commits or is discarded.
      CREATE TABLE staged_runs (
        run_id     TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL
      );

      CREATE TABLE jobs (
        id             INTEGER PRIMARY KEY,
        run_id         TEXT NOT NULL REFERENCES runs (id),
        model          TEXT NOT NULL,
        epoch          INTEGER NOT NULL,
        status         TEXT NOT NULL CHECK (status IN ('pending','running','done','failed','cancelled')),
        attempt        INTEGER NOT NULL DEFAULT 0,
        worker_id      TEXT,
        vignettes_done INTEGER NOT NULL DEFAULT 0,
        input_tokens   INTEGER NOT NULL DEFAULT 0,
        output_tokens  INTEGER NOT NULL DEFAULT 0,
        started_at     INTEGER,
        finished_at    INTEGER,
        error          TEXT,
        UNIQUE (run_id, model, epoch)
      );

      -- One row per model call. The prompt lives once in vignettes; no index touches response text.
      CREATE TABLE responses (
        seq              INTEGER PRIMARY KEY,
        job_id           INTEGER NOT NULL,
        vignette_idx     INTEGER NOT NULL,
        response         TEXT NOT NULL,
        input_tokens     INTEGER NOT NULL,
        output_tokens    INTEGER NOT NULL,
        cached_tokens    INTEGER,
        reasoning_tokens INTEGER,
        latency_ms       INTEGER NOT NULL,
        host             TEXT NOT NULL,
        cached           INTEGER NOT NULL,
        finished_at      INTEGER NOT NULL,
        UNIQUE (job_id, vignette_idx)
      );
    `,
};
