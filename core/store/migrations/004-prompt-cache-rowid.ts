/**
 * Schema version 4: prompt cache as a rowid table: entries carry whole responses, and random-key inserts of large rows into a WITHOUT ROWID b-tree cost a sweep its speed.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 4,
  description: 'prompt cache as a rowid table: entries carry whole responses, and random-key inserts of large rows into a WITHOUT ROWID b-tree cost a sweep its speed',
  up: `
      CREATE TABLE prompt_cache_rows (
        id         INTEGER PRIMARY KEY,
        key        TEXT NOT NULL UNIQUE,
        value      TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      );
      INSERT INTO prompt_cache_rows (key, value, created_at, expires_at)
        SELECT key, value, created_at, expires_at FROM prompt_cache;
      DROP TABLE prompt_cache;
      ALTER TABLE prompt_cache_rows RENAME TO prompt_cache;
      CREATE INDEX prompt_cache_by_expiry ON prompt_cache (expires_at);
    `,
};
