/**
 * Schema version 10: runs people manage (a name, notes, tags, archived) and a restart count that
 * orders a run's states across retry, resume and takeover; each scorer's last reason for a record
 * it could not score.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 10,
  description: 'run names, notes, tags and archiving; a restart count per run; the last reason a scorer could not score a record',
  up: `
      ALTER TABLE runs ADD COLUMN name TEXT;                      -- what the user called the run (null: none given)
      ALTER TABLE runs ADD COLUMN notes TEXT;                     -- free text, null when empty
      ALTER TABLE runs ADD COLUMN tags TEXT;                      -- JSON array of strings, null when none
      ALTER TABLE runs ADD COLUMN archived_at INTEGER;            -- hidden from lists since then (null: not archived)
      -- Times the run went back to queued after it had started or ended (a retry, a resume, a
      -- takeover from a dead owner): a client orders two snapshots of a run by it first, since the
      -- status alone moves backwards then.
      ALTER TABLE runs ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE run_scorers ADD COLUMN last_error TEXT;         -- why the last record that could not be scored was not
      CREATE INDEX runs_by_archived ON runs (archived_at) WHERE archived_at IS NOT NULL;
    `,
};
