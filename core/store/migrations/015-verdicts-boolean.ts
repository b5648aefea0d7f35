/**
 * Schema version 15: whether every verdict a scorer gave on a run is a boolean pass (value 1) or
 * fail (value 0), kept as the verdicts are written, so the report, the score matrix and run
 * comparisons read a code plugin declared graded as pass/fail alike, without scanning its scores.
 * Released: never edited, only followed by the next migration.
 * Runs on: Node (core).
 */
import type { Migration } from './migration.js';

export const migration: Migration = {
  version: 15,
  description: 'whether every verdict of a (run, scorer) is a boolean',
  up: `
      -- NULL before the first verdict; 1 while every verdict (the records' and their retries') is
      -- a boolean; 0 from the first that is not. Never goes back to 1.
      ALTER TABLE run_scorers ADD COLUMN verdicts_boolean INTEGER;

      -- The scores written before this version, once.
      UPDATE run_scorers SET verdicts_boolean = (
        SELECT CASE WHEN COUNT(*) = 0 THEN NULL ELSE MIN(b) END FROM (
          SELECT (sc.passed IS NOT NULL AND sc.value = sc.passed) AS b
          FROM scores sc JOIN responses s ON s.seq = sc.seq JOIN jobs j ON j.id = s.job_id
          WHERE sc.scorer_id = run_scorers.scorer_id AND j.run_id = run_scorers.run_id AND sc.failed = 0
          UNION ALL
          SELECT (a.passed IS NOT NULL AND a.value = a.passed) AS b
          FROM attempt_scores a JOIN responses s ON s.seq = a.seq JOIN jobs j ON j.id = s.job_id
          WHERE a.scorer_id = run_scorers.scorer_id AND j.run_id = run_scorers.run_id
        )
      );
  `,
};
