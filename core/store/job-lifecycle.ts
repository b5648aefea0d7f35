/**
 * A job's life in the store: recorded once per (model, epoch), its attempts started on workers,
 * a retryable failure noted, a vignette given up on, the job failed for good; and the vignettes
 * it still has to pose, read a page at a time. Only the job's current attempt may change it, and
 * every write of the run's owner is fenced (see run-fence.ts). Landing records is the records
 * room's (record-writes.ts).
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import type { HostWait, IndexedVignette, Job, JobId, JobVignette, RunId } from '../domain.js';
import { prepareJobGuard } from './record-writes.js';
import type { RunFence } from './run-fence.js';
import type { RunQueries } from './run-queries.js';
import { toVignette, type VignetteRow } from './run-rows.js';
import { FINISHED_STAGES_OF_PAGE, toStageAnswer, type FinishedStageRow } from './stage-rows.js';

export class JobLifecycle {
  private readonly stmt;

  constructor(
    private readonly db: Database.Database,
    /** The fence check of the runs room, run inside each write's transaction. */
    private readonly hold: (fence: RunFence | undefined) => void,
    private readonly queries: RunQueries,
  ) {
    this.stmt = {
      jobGuard: prepareJobGuard(db),
      insertJob: db.prepare(
        `INSERT INTO jobs (run_id, model, epoch, status) VALUES (?, ?, ?, 'pending')
         ON CONFLICT (run_id, model, epoch) DO NOTHING`,
      ),
      startAttempt: db.prepare<[string, number, number], { attempt: number }>(
        `UPDATE jobs SET attempt = attempt + 1, status = 'running', worker_id = ?, error = NULL,
           started_at = COALESCE(started_at, ?)
         WHERE id = ? AND status IN ('pending', 'running') RETURNING attempt`,
      ),
      landedCount: db.prepare<[number], { n: number }>(`SELECT COUNT(*) AS n FROM responses WHERE job_id = ?`),
      pendingVignettes: db.prepare<[string, number, number, number], VignetteRow>(
        `SELECT v.idx, v.vignette_id, v.prompt, v.system, v.messages, v.target, v.metadata FROM vignettes v
          WHERE v.run_id = ? AND v.idx > ?
            AND NOT EXISTS (SELECT 1 FROM responses r WHERE r.job_id = ? AND r.vignette_idx = v.idx)
          ORDER BY v.idx LIMIT ?`,
      ),
      pendingAmong: db.prepare<[string, string, number], VignetteRow>(
        `SELECT v.idx, v.vignette_id, v.prompt, v.system, v.messages, v.target, v.metadata
           FROM json_each(?) AS w JOIN vignettes v ON v.run_id = ? AND v.idx = w.value
          WHERE NOT EXISTS (SELECT 1 FROM responses r WHERE r.job_id = ? AND r.vignette_idx = v.idx)
          ORDER BY w.key`,
      ),
      answeredAmong: db.prepare<[string, number, number], { n: number }>(
        `SELECT COUNT(*) AS n FROM json_each(?) AS w
          WHERE EXISTS (SELECT 1 FROM responses r WHERE r.job_id = ? AND r.vignette_idx = w.value)
             OR EXISTS (SELECT 1 FROM vignette_failures f WHERE f.job_id = ? AND f.vignette_idx = w.value)`,
      ),
      finishedStages: db.prepare<[number, number, number], FinishedStageRow>(FINISHED_STAGES_OF_PAGE),
      markJobFailed: db.prepare(`UPDATE jobs SET status = 'failed', finished_at = ?, error = ?, waiting_for_host = NULL WHERE id = ?`),
      bumpFailed: db.prepare(`UPDATE runs SET failed_count = failed_count + 1 WHERE id = ?`),
      setJobWaiting: db.prepare(`UPDATE jobs SET waiting_for_host = ? WHERE id = ? AND attempt = ? AND status = 'running'`),
      putVignetteFailure: db.prepare(
        `INSERT INTO vignette_failures (job_id, vignette_idx, attempts, code, message, at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (job_id, vignette_idx) DO UPDATE SET attempts = excluded.attempts, code = excluded.code,
           message = excluded.message, at = excluded.at`,
      ),
      noteJobError: db.prepare(`UPDATE jobs SET status = 'pending', error = ? WHERE id = ? AND attempt = ? AND status = 'running'`),
    };
  }

  /** Records a run's jobs; jobs that already exist (a resumed run) are kept as they are. */
  insertJobs(runId: RunId, jobs: ReadonlyArray<{ model: string; epoch: number }>, fence?: RunFence): Job[] {
    this.db
      .transaction(() => {
        this.hold(fence);
        for (const j of jobs) this.stmt.insertJob.run(runId, j.model, j.epoch);
      })
      .immediate();
    return this.queries.jobs(runId);
  }

  /** Starts the next attempt of a job on a worker; null if the job is already settled. */
  startAttempt(jobId: JobId, workerId: string, fence?: RunFence): number | null {
    const row = this.db
      .transaction(() => {
        this.hold(fence);
        return this.stmt.startAttempt.get(workerId, Date.now(), jobId);
      })
      .immediate();
    return row ? row.attempt : null;
  }

  /** How many of the run's vignettes already have a record from this job. */
  landedCount(jobId: JobId): number {
    return this.stmt.landedCount.get(jobId)!.n;
  }

  /**
   * The run's vignettes that have no record from this job yet, in index order, read a page at a
   * time as the caller iterates: a job of a million vignettes never sits in memory whole, and no
   * statement stays open between pages, so the writes in between find the connection free. Pages
   * are small so that each lives only briefly (a page held for seconds would be promoted to the
   * old generation and linger there as garbage). A staged vignette interrupted mid-template comes
   * with the calls it finished (`finishedStages`), so the worker poses only the calls after them.
   */
  *pendingVignettes(runId: RunId, jobId: JobId, pageSize = 32): Generator<JobVignette, void, undefined> {
    let after = -1;
    for (;;) {
      const rows = this.stmt.pendingVignettes.all(runId, after, jobId, pageSize);
      const finished = rows.length === 0 ? [] : this.stmt.finishedStages.all(jobId, after, rows[rows.length - 1]!.idx);
      for (const row of rows) {
        const v: JobVignette = toVignette(row);
        const stages = finished.filter((f) => f.vignette_idx === row.idx).map(toStageAnswer);
        if (stages.length > 0) v.finishedStages = stages;
        yield v;
      }
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1]!.idx;
    }
  }

  /**
   * Of the vignettes with these indices (a batch of a run posed until decided, in its order), those
   * with no record from this job yet, in the order given.
   */
  pendingAmong(runId: RunId, jobId: JobId, indices: readonly number[]): IndexedVignette[] {
    return this.stmt.pendingAmong.all(JSON.stringify(indices), runId, jobId).map(toVignette);
  }

  /** How many of the vignettes with these indices the job answered (a record landed) or gave up on: a batch is complete when all. */
  answeredAmong(jobId: JobId, indices: readonly number[]): number {
    return this.stmt.answeredAmong.get(JSON.stringify(indices), jobId, jobId)!.n;
  }

  /** Settles a job as failed for good (guarded like `records.settle`). */
  failJob(jobId: JobId, attempt: number, error: string, fence?: RunFence): boolean {
    return this.db
      .transaction(() => {
        this.hold(fence);
        const guard = this.stmt.jobGuard.get(jobId);
        if (!guard || guard.status !== 'running' || guard.attempt !== attempt) return false;
        this.stmt.markJobFailed.run(Date.now(), error, jobId);
        this.stmt.bumpFailed.run(guard.run_id);
        return true;
      })
      .immediate();
  }

  /** Shows (or, with null, clears) the host a job's calls are waiting for; only for its current attempt. */
  setJobWaiting(jobId: JobId, attempt: number, wait: HostWait | null): void {
    this.stmt.setJobWaiting.run(wait === null ? null : JSON.stringify(wait), jobId, attempt);
  }

  /**
   * Records a vignette the job gave up on (its attempts spent), with the last error. Only the job's
   * current attempt may: a stale worker's word changes nothing.
   */
  recordVignetteFailure(jobId: JobId, attempt: number, f: { vignetteIndex: number; attempts: number; code: string; message: string }): boolean {
    return this.db
      .transaction(() => {
        const guard = this.stmt.jobGuard.get(jobId);
        if (!guard || guard.status !== 'running' || guard.attempt !== attempt) return false;
        this.stmt.putVignetteFailure.run(jobId, f.vignetteIndex, f.attempts, f.code, f.message, Date.now());
        return true;
      })
      .immediate();
  }


  /** Notes a retryable failure: the job waits for its next attempt. */
  noteRetry(jobId: JobId, attempt: number, error: string, fence?: RunFence): void {
    this.db
      .transaction(() => {
        this.hold(fence);
        this.stmt.noteJobError.run(error, jobId, attempt);
      })
      .immediate();
  }
}
