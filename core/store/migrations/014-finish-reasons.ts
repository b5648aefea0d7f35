/**
 * Schema version 14: a record's finish reason, the provider's own word for why the answer ended
 * (`stop`, `length`, `end_turn`, `max_tokens`, ...), so an answer cut at its output cap or its
 * model's window says so in the record and its exports.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 14,
  description: "a record's finish reason",
  up: `
      -- NULL where the provider gave none (and for every record made before this version).
      ALTER TABLE responses ADD COLUMN finish_reason TEXT;
  `,
};
