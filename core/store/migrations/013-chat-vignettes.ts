/**
 * Schema version 13: chat vignettes: a vignette's conversation (JSON turns, the last the user's),
 * beside its prompt column, which holds that last user turn.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 13,
  description: "chat vignettes: a vignette's conversation beside its prompt",
  up: `
      -- NULL for a single-turn vignette; else the JSON array of {role, content} turns posed.
      ALTER TABLE vignettes ADD COLUMN messages TEXT;
  `,
};
