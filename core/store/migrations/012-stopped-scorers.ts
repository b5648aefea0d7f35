/**
 * Schema version 12: a scorer version stopped for good (a plugin whose thread kept crashing), with the reason.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 12,
  description: 'a scorer version stopped for good, with the reason',
  up: `
      -- Set once, when the scorer cannot go on at all; a stopped version is never picked up again,
      -- by this process or after a restart, so a crash loop does not resume with it.
      ALTER TABLE scorers ADD COLUMN stopped_reason TEXT;
    `,
};
