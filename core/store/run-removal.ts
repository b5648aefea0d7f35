/**
 * Deleting a run for good: its row, jobs, vignettes, records, scores, retries and usage, in one
 * IMMEDIATE transaction. Fenced: a queued or running run is refused (cancel it first), and so is a
 * run some process is scoring under a live lease, so no owner is cut off mid-write. Also which
 * archived runs a retention has outlived.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import { PanoptesError, type Run, type RunId } from '../domain.js';
import type { RunQueries } from './run-queries.js';

/** The run's records, for the statements that reach scores and retries by record. */
const RUN_SEQS = `SELECT s.seq FROM responses s JOIN jobs j ON j.id = s.job_id WHERE j.run_id = @runId`;
const RUN_SCORERS = `SELECT scorer_id FROM run_scorers WHERE run_id = @runId`;

export class RunRemoval {
  private readonly stmt;

  constructor(
    private readonly db: Database.Database,
    private readonly queries: RunQueries,
  ) {
    this.stmt = {
      liveScoring: db.prepare<[string, number], { n: number }>(
        `SELECT COUNT(*) AS n FROM run_scorers WHERE run_id = ? AND owner IS NOT NULL AND lease_until > ?`,
      ),
      deletes: [
        `DELETE FROM scores WHERE scorer_id IN (${RUN_SCORERS}) AND seq IN (${RUN_SEQS})`,
        `DELETE FROM attempt_scores WHERE scorer_id IN (${RUN_SCORERS}) AND seq IN (${RUN_SEQS})`,
        `DELETE FROM retry_attempts WHERE scorer_id IN (${RUN_SCORERS}) AND seq IN (${RUN_SEQS})`,
        `DELETE FROM responses WHERE job_id IN (SELECT id FROM jobs WHERE run_id = @runId)`,
        `DELETE FROM vignette_failures WHERE job_id IN (SELECT id FROM jobs WHERE run_id = @runId)`,
        `DELETE FROM jobs WHERE run_id = @runId`,
        `DELETE FROM vignettes WHERE run_id = @runId`,
        `DELETE FROM run_scorers WHERE run_id = @runId`,
        `DELETE FROM judge_usage WHERE run_id = @runId`,
        `DELETE FROM retry_usage WHERE run_id = @runId`,
        `DELETE FROM sweep_usage WHERE run_id = @runId`,
        `DELETE FROM staged_runs WHERE run_id = @runId`,
        `DELETE FROM runs WHERE id = @runId`,
      ].map((sql) => db.prepare(sql)),
      archivedBefore: db.prepare<[number], { id: string }>(
        `SELECT id FROM runs WHERE archived_at IS NOT NULL AND archived_at < ? AND status NOT IN ('queued', 'running') ORDER BY archived_at`,
      ),
    };
  }

  /** Deletes a finished run and everything it holds; answers with the run as it was. */
  deleteRun(runId: RunId): Run {
    return this.db
      .transaction(() => {
        const run = this.queries.getRun(runId);
        if (!run) throw new PanoptesError('not_found', `no run "${runId}"`, { where: 'runId' });
        if (run.status === 'queued' || run.status === 'running') {
          throw new PanoptesError('conflict', `run ${runId} is ${run.status}: cancel it first, then delete it (its owner is never cut off mid-write)`, {
            where: 'runId',
          });
        }
        if (this.stmt.liveScoring.get(runId, Date.now())!.n > 0) {
          throw new PanoptesError('conflict', `run ${runId} is being scored: delete it once its scoring has stopped`, { where: 'runId' });
        }
        for (const statement of this.stmt.deletes) statement.run({ runId });
        return run;
      })
      .immediate();
  }

  /** Archived runs (ended) archived before `cutoff` (ms since the epoch), oldest first. */
  archivedBefore(cutoff: number): RunId[] {
    return this.stmt.archivedBefore.all(cutoff).map((r) => r.id);
  }
}
