/**
 * Schema version 8: a run's prices kept with it; a job waiting for a down host; each vignette given up on, with its last error.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 8,
  description: "a run's prices kept with it; a job waiting for a down host; each vignette given up on, with its last error",
  up: `
      ALTER TABLE runs ADD COLUMN prices TEXT;             -- JSON: {model: {inputPerMTok, outputPerMTok}} as of creation
      ALTER TABLE jobs ADD COLUMN waiting_for_host TEXT;   -- JSON {host, since} while the job's calls wait for a host that is down
      CREATE TABLE vignette_failures (
        job_id       INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        vignette_idx INTEGER NOT NULL,
        attempts     INTEGER NOT NULL,
        code         TEXT NOT NULL,
        message      TEXT NOT NULL,
        at           INTEGER NOT NULL,
        PRIMARY KEY (job_id, vignette_idx)
      ) WITHOUT ROWID;
    `,
};
