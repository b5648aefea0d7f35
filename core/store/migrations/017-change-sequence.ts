/**
 * Schema version 17: the change sequence. Triggers write, in the very transaction of the change,
 * which run, job or run's scoring moved and a sequence number higher than any before, so another
 * process on the same data folder learns what changed by reading the rows past the last number it
 * saw, instead of comparing fingerprints of the newest runs (which missed scoring and old runs).
 * One row per (kind, run, job), replaced on each change, so the table stays as small as the runs,
 * jobs and scorer attachments it tracks. Lease renewals are left out: they change nothing a
 * viewer shows.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

/** The next number: one more than any row holds (the table never loses its highest row, see below). */
const NEXT = `(SELECT COALESCE(MAX(seq), 0) + 1 FROM changes)`;

export const migration: Migration = {
  version: 17,
  description: 'the change sequence other processes read',
  up: `
      -- kind: 'run' (the run's row), 'job' (one of its jobs, job_id), 'scoring' (its scorers' progress).
      CREATE TABLE changes (
        kind   TEXT NOT NULL CHECK (kind IN ('run', 'job', 'scoring')),
        run_id TEXT NOT NULL,
        job_id INTEGER NOT NULL DEFAULT 0,
        seq    INTEGER NOT NULL,
        PRIMARY KEY (kind, run_id, job_id)
      ) WITHOUT ROWID;
      CREATE INDEX changes_by_seq ON changes (seq);

      CREATE TRIGGER changes_run_insert AFTER INSERT ON runs BEGIN
        INSERT OR REPLACE INTO changes (kind, run_id, job_id, seq) VALUES ('run', NEW.id, 0, ${NEXT});
      END;
      CREATE TRIGGER changes_run_update
        AFTER UPDATE OF status, done_count, failed_count, restarts, started_at, finished_at, error, owner,
                        name, notes, tags, archived_at, prices
        ON runs BEGIN
        INSERT OR REPLACE INTO changes (kind, run_id, job_id, seq) VALUES ('run', NEW.id, 0, ${NEXT});
      END;
      -- A removed run's row is renumbered first, so the highest number survives the deletes that follow.
      CREATE TRIGGER changes_run_delete AFTER DELETE ON runs BEGIN
        INSERT OR REPLACE INTO changes (kind, run_id, job_id, seq) VALUES ('run', OLD.id, 0, ${NEXT});
        DELETE FROM changes WHERE run_id = OLD.id AND kind <> 'run';
      END;
      CREATE TRIGGER changes_job_update
        AFTER UPDATE OF status, attempt, worker_id, vignettes_done, error, waiting_for_host
        ON jobs BEGIN
        INSERT OR REPLACE INTO changes (kind, run_id, job_id, seq) VALUES ('job', NEW.run_id, NEW.id, ${NEXT});
      END;
      CREATE TRIGGER changes_scoring_insert AFTER INSERT ON run_scorers BEGIN
        INSERT OR REPLACE INTO changes (kind, run_id, job_id, seq) VALUES ('scoring', NEW.run_id, 0, ${NEXT});
      END;
      CREATE TRIGGER changes_scoring_update
        AFTER UPDATE OF scored_seq, done_count, failed_count, owner, last_error
        ON run_scorers BEGIN
        INSERT OR REPLACE INTO changes (kind, run_id, job_id, seq) VALUES ('scoring', NEW.run_id, 0, ${NEXT});
      END;
      CREATE TRIGGER changes_scorer_stopped AFTER UPDATE OF stopped_reason ON scorers BEGIN
        INSERT OR REPLACE INTO changes (kind, run_id, job_id, seq)
          SELECT 'scoring', run_id, 0, ${NEXT} FROM run_scorers WHERE scorer_id = NEW.id;
      END;
  `,
};
