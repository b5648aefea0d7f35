/**
 * Schema version 3: each job's first and last response seq (so a run's pages scan only its own range); vignettes by id.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 3,
  description: "each job's first and last response seq (so a run's pages scan only its own range); vignettes by id",
  up: `
      ALTER TABLE jobs ADD COLUMN first_seq INTEGER;
      ALTER TABLE jobs ADD COLUMN last_seq INTEGER;
      UPDATE jobs SET
        first_seq = (SELECT MIN(seq) FROM responses WHERE job_id = jobs.id),
        last_seq  = (SELECT MAX(seq) FROM responses WHERE job_id = jobs.id);
      CREATE INDEX vignettes_by_id ON vignettes (run_id, vignette_id);
    `,
};
