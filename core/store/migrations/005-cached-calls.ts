/**
 * Schema version 5: each job's calls answered from the prompt cache and the tokens those answers carry: a re-run reports what it reused.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 5,
  description: "each job's calls answered from the prompt cache and the tokens those answers carry: a re-run reports what it reused",
  up: `
      ALTER TABLE jobs ADD COLUMN cached_calls INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE jobs ADD COLUMN cached_input_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE jobs ADD COLUMN cached_output_tokens INTEGER NOT NULL DEFAULT 0;
      UPDATE jobs SET
        cached_calls = (SELECT COUNT(*) FROM responses WHERE job_id = jobs.id AND cached = 1),
        cached_input_tokens = (SELECT COALESCE(SUM(input_tokens), 0) FROM responses WHERE job_id = jobs.id AND cached = 1),
        cached_output_tokens = (SELECT COALESCE(SUM(output_tokens), 0) FROM responses WHERE job_id = jobs.id AND cached = 1);
    `,
};
