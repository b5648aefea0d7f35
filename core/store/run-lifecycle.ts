/**
 * A run's life in the store: staged, queued, claimed by one owner under a lease, fenced on every
 * write, handed back when its owner dies or stops, and settled, cancelled, failed or retried. Each
 * change is one IMMEDIATE transaction, so two processes on one database never take the same run.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import { PanoptesError, type IndexedVignette, type Run, type RunId, type RunOptions, type RunPrices, type RunStatus } from '../domain.js';
import { ownerIsDeadLocally } from './owner-liveness.js';
import { RunLostError, type RunFence } from './run-fence.js';
import type { RunQueries } from './run-queries.js';
import { toRun, type RunRow } from './run-rows.js';

export interface NewRun {
  id: RunId;
  manifestPath: string;
  models: string[];
  epochs: number;
  vignetteCount: number;
  options: RunOptions;
  /** What the user called it, if anything. */
  name?: string | undefined;
  /** The prices the run is costed at, for good (later catalogs do not change a run's cost). */
  prices?: RunPrices;
}

/** What the user says of a run; an absent field is left as it is, an empty one cleared. */
export interface RunDescription {
  name?: string | undefined;
  notes?: string | undefined;
  tags?: string[] | undefined;
  archived?: boolean | undefined;
}

/** What a run's last job leaves behind: the run's final status and the reason when it failed. */
export interface RunSettlement {
  run: Run;
  /** True the first time the run reached a terminal status. */
  changed: boolean;
}

export class RunLifecycle {
  private readonly stmt;

  constructor(
    private readonly db: Database.Database,
    private readonly queries: RunQueries,
  ) {
    this.stmt = {
      insertVignette: db.prepare(
        `INSERT INTO vignettes (run_id, idx, vignette_id, prompt, system, target, metadata)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertRun: db.prepare(
        `INSERT INTO runs (id, manifest_path, models, epochs, vignette_count, status, job_count, options, created_at, name)
         VALUES (@id, @manifestPath, @models, @epochs, @vignetteCount, 'queued', @jobCount, @options, @createdAt, @name)`,
      ),
      setRunPrices: db.prepare(`UPDATE runs SET prices = ? WHERE id = ?`),
      claimNext: db.prepare<[string, number, number], RunRow>(
        `UPDATE runs SET status = 'running', owner = ?, lease_until = ?, started_at = COALESCE(started_at, ?)
         WHERE id = (SELECT id FROM runs WHERE status = 'queued' ORDER BY created_at, rowid LIMIT 1)
         RETURNING *`,
      ),
      claimOne: db.prepare<[string, number, number, string], RunRow>(
        `UPDATE runs SET status = 'running', owner = ?, lease_until = ?, started_at = COALESCE(started_at, ?)
         WHERE id = ? AND status = 'queued' RETURNING *`,
      ),
      renewLease: db.prepare(`UPDATE runs SET lease_until = ? WHERE id = ? AND owner = ? AND status = 'running'`),
      holdRun: db.prepare(
        `UPDATE runs SET lease_until = MAX(COALESCE(lease_until, 0), ?) WHERE id = ? AND owner = ? AND status = 'running'`,
      ),
      runningRuns: db.prepare<[], Pick<RunRow, 'id' | 'owner' | 'lease_until'>>(
        `SELECT id, owner, lease_until FROM runs WHERE status = 'running'`,
      ),
      requeueRun: db.prepare(
        `UPDATE runs SET status = 'queued', owner = NULL, lease_until = NULL, restarts = restarts + 1
         WHERE id = ? AND status = 'running' AND (owner IS ? OR owner = ?)`,
      ),
      requeueJobs: db.prepare(`UPDATE jobs SET status = 'pending' WHERE run_id = ? AND status = 'running'`),
      finishRun: db.prepare(
        `UPDATE runs SET status = ?, finished_at = ?, error = ?, owner = NULL, lease_until = NULL
         WHERE id = ? AND status IN ('queued', 'running')`,
      ),
      cancelJobs: db.prepare(
        `UPDATE jobs SET status = 'cancelled', finished_at = ? WHERE run_id = ? AND status IN ('pending', 'running')`,
      ),
      failedJobs: db.prepare<[string], { model: string; epoch: number; error: string | null; gave_up: number }>(
        `SELECT model, epoch, error, EXISTS (SELECT 1 FROM vignette_failures f WHERE f.job_id = jobs.id) AS gave_up
         FROM jobs WHERE run_id = ? AND status = 'failed' ORDER BY model, epoch`,
      ),
      deleteStagedVignettes: db.prepare(`DELETE FROM vignettes WHERE run_id = ?`),
      stage: db.prepare(`INSERT INTO staged_runs (run_id, created_at) VALUES (?, ?)`),
      unstage: db.prepare(`DELETE FROM staged_runs WHERE run_id = ?`),
      stagedRuns: db.prepare<[], { run_id: string }>(`SELECT run_id FROM staged_runs`),
    };
  }

  // ---- Creating runs -------------------------------------------------------------------------

  /**
   * Marks a run id as being created, so vignettes copied in before the run row exists are
   * cleaned up if the process dies half-way (see `discardAbandonedStaging`).
   */
  beginStaging(runId: RunId): void {
    this.stmt.stage.run(runId, Date.now());
  }

  /** Copies one batch of a new run's vignettes in, in one transaction. */
  stageVignettes(runId: RunId, vignettes: readonly IndexedVignette[]): void {
    this.db
      .transaction(() => {
        for (const v of vignettes) {
          this.stmt.insertVignette.run(
            runId,
            v.index,
            v.id,
            v.prompt,
            v.system ?? null,
            v.target ?? null,
            v.metadata === undefined ? null : JSON.stringify(v.metadata),
          );
        }
      })
      .immediate();
  }

  /** Throws away a run that failed during creation: it never existed. */
  discardStaging(runId: RunId): void {
    this.db
      .transaction(() => {
        this.stmt.deleteStagedVignettes.run(runId);
        this.stmt.unstage.run(runId);
      })
      .immediate();
  }

  /** Removes vignettes left by a process that died while creating a run. Call once at start-up. */
  discardAbandonedStaging(): number {
    const staged = this.stmt.stagedRuns.all();
    for (const s of staged) this.discardStaging(s.run_id);
    return staged.length;
  }

  /** Persists a run as `queued` (its vignettes staged already). Nothing runs yet. */
  insertRun(input: NewRun): Run {
    const createdAt = Date.now();
    this.db
      .transaction(() => {
        this.stmt.insertRun.run({
          id: input.id,
          manifestPath: input.manifestPath,
          models: JSON.stringify(input.models),
          epochs: input.epochs,
          vignetteCount: input.vignetteCount,
          jobCount: input.models.length * input.epochs,
          options: JSON.stringify(input.options),
          createdAt,
          name: input.name === undefined || input.name === '' ? null : input.name,
        });
        if (input.prices) this.stmt.setRunPrices.run(JSON.stringify(input.prices), input.id);
        this.stmt.unstage.run(input.id);
      })
      .immediate();
    return this.queries.getRun(input.id)!;
  }

  // ---- Claiming and leasing --------------------------------------------------------------------

  /** Flips the oldest queued run to running for `owner`, atomically across processes. */
  claimNextRun(owner: string, leaseMs: number): Run | null {
    const now = Date.now();
    const row = this.db.transaction(() => this.stmt.claimNext.get(owner, now + leaseMs, now)).immediate();
    return row ? toRun(row) : null;
  }

  /** Claims one specific queued run (the CLI's `run` drives the run it created). */
  claimRun(runId: RunId, owner: string, leaseMs: number): Run | null {
    const now = Date.now();
    const row = this.db.transaction(() => this.stmt.claimOne.get(owner, now + leaseMs, now, runId)).immediate();
    return row ? toRun(row) : null;
  }

  renewLease(runId: RunId, owner: string, leaseMs: number): boolean {
    return this.stmt.renewLease.run(Date.now() + leaseMs, runId, owner).changes === 1;
  }

  /**
   * The fence of every write an owner makes for its run (see run-fence.ts): inside the caller's
   * transaction, checks that the run is still this owner's and running, and extends its lease.
   * The jobs and records rooms call it inside their own transactions.
   */
  hold(fence: RunFence | undefined): void {
    if (!fence) return;
    if (this.stmt.holdRun.run(Date.now() + fence.leaseMs, fence.runId, fence.owner).changes !== 1) throw new RunLostError(fence.runId);
  }

  /** Runs `write` (a write outside the database, such as an append to responses.jsonl) only while the owner holds its run, with the database's write lock held so no takeover can come between the check and the write. */
  fenced<T>(fence: RunFence, write: () => T): T {
    return this.db
      .transaction(() => {
        this.hold(fence);
        return write();
      })
      .immediate();
  }

  /**
   * Puts runs whose owner is gone back in the queue: an owner on this host whose process is dead,
   * or any owner whose lease has lapsed. Their running jobs become pending; landed records stay.
   */
  recoverInterruptedRuns(): RunId[] {
    const now = Date.now();
    const recovered: RunId[] = [];
    for (const r of this.stmt.runningRuns.all()) {
      const lapsed = r.lease_until === null || r.lease_until < now;
      if (!lapsed && !ownerIsDeadLocally(r.owner)) continue;
      const changed = this.db
        .transaction(() => {
          const res = this.stmt.requeueRun.run(r.id, r.owner, r.owner);
          if (res.changes === 1) this.stmt.requeueJobs.run(r.id);
          return res.changes === 1;
        })
        .immediate();
      if (changed) recovered.push(r.id);
    }
    return recovered;
  }

  /** Hands a run this owner holds back to the queue (a scheduler stopping mid-run). */
  releaseRun(runId: RunId, owner: string): boolean {
    return this.db
      .transaction(() => {
        const res = this.stmt.requeueRun.run(runId, owner, owner);
        if (res.changes === 1) this.stmt.requeueJobs.run(runId);
        return res.changes === 1;
      })
      .immediate();
  }

  // ---- Finishing runs --------------------------------------------------------------------------

  /**
   * Ends a run once no job is pending or running: `done` when every job landed, `failed` with a
   * reason naming the failed jobs otherwise.
   */
  settleRun(runId: RunId, fence?: RunFence): RunSettlement {
    return this.db
      .transaction(() => {
        this.hold(fence);
        const run = this.queries.getRun(runId);
        if (!run) throw new PanoptesError('not_found', `no run ${runId}`);
        if (run.status !== 'running' && run.status !== 'queued') return { run, changed: false };
        let status: RunStatus = 'done';
        let error: string | null = null;
        if (run.doneCount < run.jobCount) {
          const failed = this.stmt.failedJobs.all(runId);
          // Jobs that failed as a whole (no worker, a refused key), not by giving up on some vignettes.
          const whole = failed.filter((f) => f.gave_up === 0);
          const givenUp = this.queries.vignetteFailureCount(runId);
          // Done with failures only when the user chose so and no job failed as a whole.
          status = run.options.endWithFailures === 'done' && whole.length === 0 && givenUp > 0 ? 'done' : 'failed';
          const list = whole
            .slice(0, 5)
            .map((f) => `${f.model}@${f.epoch}: ${f.error ?? 'failed'}`)
            .join('; ');
          const more = whole.length > 5 ? `; and ${whole.length - 5} more` : '';
          const parts = [`${failed.length} of ${run.jobCount} jobs failed${whole.length > 0 ? `: ${list}${more}` : ''}`];
          if (givenUp > 0) {
            const listed = this.queries.vignetteFailures(runId, 10);
            const vlist = listed.map((f) => `${f.vignetteId} (${f.model}@${f.epoch}): ${f.message}`).join('; ');
            parts.push(`${givenUp} vignettes failed: ${vlist}${givenUp > listed.length ? `; and ${givenUp - listed.length} more` : ''}`);
          }
          error = parts.join('; ');
        }
        this.stmt.finishRun.run(status, Date.now(), error, runId);
        return { run: this.queries.getRun(runId)!, changed: true };
      })
      .immediate();
  }

  /** Cancels a queued or running run and its unsettled jobs. Landed records stay. */
  cancelRun(runId: RunId, reason = 'cancelled by user'): Run {
    return this.db
      .transaction(() => {
        const run = this.queries.getRun(runId);
        if (!run) throw new PanoptesError('not_found', `no run ${runId}`, { where: 'runId' });
        if (run.status === 'queued' || run.status === 'running') {
          const now = Date.now();
          this.stmt.cancelJobs.run(now, runId);
          this.stmt.finishRun.run('cancelled', now, reason, runId);
        }
        return this.queries.getRun(runId)!;
      })
      .immediate();
  }

  /**
   * Puts a finished run's failed and cancelled jobs back to pending and the run back in the queue,
   * in one transaction; their records so far are kept, so each job re-poses only what it never
   * answered, the vignettes it gave up on included. Refused while the run is queued or running, and when no job failed or was cancelled.
   */
  retryFailedJobs(runId: RunId): Run {
    return this.db
      .transaction(() => {
        const run = this.queries.getRun(runId);
        if (!run) throw new PanoptesError('not_found', `no run ${runId}`, { where: 'runId' });
        if (run.status === 'queued' || run.status === 'running') {
          throw new PanoptesError('conflict', `run ${runId} is ${run.status}: retry it once it has ended`, { where: 'runId' });
        }
        // The vignettes those jobs gave up on are posed again: they are failures no longer.
        this.db
          .prepare(`DELETE FROM vignette_failures WHERE job_id IN (SELECT id FROM jobs WHERE run_id = ? AND status IN ('failed', 'cancelled'))`)
          .run(runId);
        const reset = this.db
          .prepare(
            `UPDATE jobs SET status = 'pending', error = NULL, finished_at = NULL, waiting_for_host = NULL
             WHERE run_id = ? AND status IN ('failed', 'cancelled')`,
          )
          .run(runId).changes;
        // A failed run whose jobs all landed failed after them (its responses.jsonl could not be
        // written): taking it up again finishes what is left.
        if (reset === 0 && run.status !== 'failed') {
          throw new PanoptesError('conflict', `run ${runId} has no failed or cancelled job to retry`, { where: 'runId' });
        }
        this.db
          .prepare(
            `UPDATE runs SET status = 'queued', finished_at = NULL, error = NULL, owner = NULL, lease_until = NULL, restarts = restarts + 1,
               failed_count = (SELECT COUNT(*) FROM jobs WHERE run_id = runs.id AND status = 'failed') WHERE id = ?`,
          )
          .run(runId);
        return this.queries.getRun(runId)!;
      })
      .immediate();
  }

  /** Sets what the user says of a run (its name, notes, tags, archived or not); answers with the run. */
  describeRun(runId: RunId, change: RunDescription): Run {
    const sets: string[] = [];
    const values: Record<string, string | number | null> = { runId };
    if (change.name !== undefined) (sets.push('name = @name'), (values.name = change.name === '' ? null : change.name));
    if (change.notes !== undefined) (sets.push('notes = @notes'), (values.notes = change.notes === '' ? null : change.notes));
    if (change.tags !== undefined) (sets.push('tags = @tags'), (values.tags = change.tags.length === 0 ? null : JSON.stringify(change.tags)));
    if (change.archived !== undefined) (sets.push('archived_at = @archivedAt'), (values.archivedAt = change.archived ? Date.now() : null));
    if (sets.length > 0) this.db.prepare(`UPDATE runs SET ${sets.join(', ')} WHERE id = @runId`).run(values);
    const run = this.queries.getRun(runId);
    if (!run) throw new PanoptesError('not_found', `no run "${runId}"`, { where: 'runId' });
    return run;
  }

  /** Fails a run outright (e.g. a model no worker serves), cancelling its unsettled jobs. */
  failRun(runId: RunId, reason: string, fence?: RunFence): Run {
    return this.db
      .transaction(() => {
        this.hold(fence);
        const now = Date.now();
        this.stmt.cancelJobs.run(now, runId);
        this.stmt.finishRun.run('failed', now, reason, runId);
        return this.queries.getRun(runId)!;
      })
      .immediate();
  }
}
