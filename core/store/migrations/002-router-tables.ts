/**
 * Schema version 2: model router: prompt cache, per-call metrics, rolling budget windows.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 2,
  description: 'model router: prompt cache, per-call metrics, rolling budget windows',
  up: `
      -- Successful answers by sha256 of the whole normalised request (hex). No prompt text is kept.
      CREATE TABLE prompt_cache (
        key        TEXT PRIMARY KEY,
        value      TEXT NOT NULL,                 -- JSON: text, usage, host, finishReason
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX prompt_cache_by_expiry ON prompt_cache (expires_at);

      -- One row per model call (every host attempt and every cache hit); never prompt or response text.
      CREATE TABLE router_calls (
        id               INTEGER PRIMARY KEY,
        at               INTEGER NOT NULL,
        profile          TEXT NOT NULL,
        provider         TEXT NOT NULL,
        host             TEXT NOT NULL,
        model            TEXT NOT NULL,
        status           TEXT NOT NULL,           -- 'ok' or an error code
        latency_ms       INTEGER NOT NULL,
        input_tokens     INTEGER NOT NULL,
        output_tokens    INTEGER NOT NULL,
        cached_tokens    INTEGER,
        reasoning_tokens INTEGER,
        cost_usd         REAL NOT NULL,
        cache_hit        INTEGER NOT NULL
      );
      CREATE INDEX router_calls_by_at ON router_calls (at);

      -- Spend per (profile, provider) in one-minute buckets: the rolling 24 h budget window.
      CREATE TABLE budget_usage (
        profile  TEXT NOT NULL,
        provider TEXT NOT NULL,
        minute   INTEGER NOT NULL,                -- floor(ms / 60000)
        calls    INTEGER NOT NULL,
        tokens   INTEGER NOT NULL,
        usd      REAL NOT NULL,
        PRIMARY KEY (profile, provider, minute)
      ) WITHOUT ROWID;
    `,
};
