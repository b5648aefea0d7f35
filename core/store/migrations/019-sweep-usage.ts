/**
 * Schema version 19: sweep usage: the sweep's calls per (run, model), counted before each request
 * leaves, so a call a kill -9 cut off before its record landed is still counted (see
 * core/store/billed-calls.ts). The records keep the sweep's tokens and what the cache answered;
 * this table says only how many calls were asked, so a call costs one small commit, not two.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 19,
  description: "sweep usage: the sweep's calls per (run, model), counted before each request leaves",
  up: `
      CREATE TABLE sweep_usage (
        run_id        TEXT NOT NULL REFERENCES runs (id),
        model         TEXT NOT NULL,
        calls         INTEGER NOT NULL,
        PRIMARY KEY (run_id, model)
      ) WITHOUT ROWID;
    `,
};
