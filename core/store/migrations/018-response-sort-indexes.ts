/**
 * Schema version 18: the indexes the Responses view sorts by, so a page sorted by latency, output
 * tokens or a scorer's value is a walk of an index from where the last page ended (keyset paging),
 * not a sort of the whole run. Scores are indexed by their value for each scorer and judge, over the
 * verdicts only (a record the scorer could not score has no value to sort by); `seq` last in each,
 * so ties keep the order records landed in.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 18,
  description: 'indexes for sorting responses by latency, output tokens and score value',
  up: `
      CREATE INDEX responses_by_latency ON responses (latency_ms, seq);
      CREATE INDEX responses_by_output_tokens ON responses (output_tokens, seq);
      CREATE INDEX scores_by_value ON scores (scorer_id, judge, value, seq) WHERE failed = 0;
  `,
};
