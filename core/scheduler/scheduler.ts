/**
 * The Scheduler: the engine's hub. Each tick puts interrupted runs back in the queue, claims
 * queued runs (one `UPDATE ... RETURNING`, so two schedulers never take the same run), plans
 * their jobs and dispatches them over the worker pool with bounded concurrency. A run ends
 * `done` when every job landed, `failed` with the reason otherwise.
 * Runs on: Node (core).
 */
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { backoffDelay, pause } from '../concurrency/backoff.js';
import { PanoptesError, TERMINAL_RUN_STATUSES, type Job, type Run, type RunId } from '../domain.js';
import { logger as rootLogger } from '../telemetry.js';
import { diskFullError, isDiskFull } from '../store/disk-full.js';
import { RunLostError, type RunFence } from '../store/run-fence.js';
import { processOwnerId } from '../store/owner-liveness.js';
import type { Store } from '../store/store.js';
import type { WorkerPool } from '../workers/worker-pool.js';
import { AdaptiveRun, type AdaptiveRows, type AdaptiveState } from './adaptive-run.js';
import { NO_EVENTS, type EngineEvents } from './engine-events.js';
import { JobLedger } from './job-ledger.js';
import { planJobs } from './plan-jobs.js';
import { RecordLander } from './record-lander.js';
import { ResponseLog } from './response-log.js';
import { runJobWithRetry } from './run-job-with-retry.js';

/** Pauses while responses.jsonl cannot be written (the disk full): from 250 ms doubling to 10 s. */
const LOG_RETRY = { baseMs: 250, maxMs: 10_000 };

export interface SchedulerOptions {
  store: Store;
  pool: WorkerPool;
  dataDir: string;
  events?: EngineEvents | undefined;
  logger?: Logger | undefined;
  /** How often to look for queued runs (default 250 ms); `wake()` looks at once. */
  tickMs?: number | undefined;
  /** Runs processed at once (default 2). */
  maxRuns?: number | undefined;
  /** Attempts per job before it fails (default 3). */
  maxAttempts?: number | undefined;
  retryBackoffMs?: number | undefined;
  /** How long a claim lasts without renewal before another scheduler may take the run over (default 30 s). */
  leaseMs?: number | undefined;
  /** How long a run keeps trying to bring its responses.jsonl in line with the database (a full disk) before it fails with the reason (default 2 min). */
  logPatienceMs?: number | undefined;
  /** Where a run posed until decided reads each batch's scores; without it such a run fails, saying so. */
  adaptiveRows?: AdaptiveRows | undefined;
}

interface ActiveRun {
  controller: AbortController;
  done: Promise<Run>;
}

export class Scheduler {
  private readonly store: Store;
  private readonly pool: WorkerPool;
  private readonly dataDir: string;
  private readonly events: EngineEvents;
  private readonly logger: Logger;
  private readonly tickMs: number;
  private readonly maxRuns: number;
  private readonly maxAttempts: number;
  private readonly retryBackoffMs: number;
  private readonly leaseMs: number;
  private readonly logPatienceMs: number;
  private readonly adaptiveRows: AdaptiveRows | undefined;
  /** The live loops of the runs posed until decided that this scheduler drives. */
  private readonly adaptive = new Map<RunId, AdaptiveRun>();
  private readonly active = new Map<RunId, ActiveRun>();
  /** Runs this scheduler was driving when another process took them over. */
  private readonly lost = new Set<RunId>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  private stopped = false;

  constructor(opts: SchedulerOptions) {
    this.store = opts.store;
    this.pool = opts.pool;
    this.dataDir = opts.dataDir;
    this.events = opts.events ?? NO_EVENTS;
    this.logger = opts.logger ?? rootLogger();
    this.tickMs = opts.tickMs ?? 250;
    this.maxRuns = opts.maxRuns ?? 2;
    this.maxAttempts = opts.maxAttempts ?? 3;
    this.retryBackoffMs = opts.retryBackoffMs ?? 250;
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.logPatienceMs = opts.logPatienceMs ?? 120_000;
    this.adaptiveRows = opts.adaptiveRows;
  }

  /** Where a run posed until decided that this scheduler drives stands: the open batch, the models posed it, every pair. */
  adaptiveState(runId: RunId): AdaptiveState | undefined {
    return this.adaptive.get(runId)?.state();
  }

  /** Starts ticking: interrupted and queued runs are taken up from now on. */
  start(): void {
    this.stopped = false;
    this.timer ??= setInterval(() => this.tick(), this.tickMs);
    this.timer.unref();
    this.tick();
  }

  /** Looks for work now rather than at the next tick (after a run was created). */
  wake(): void {
    if (this.timer) setImmediate(() => this.tick());
  }

  /** One pass: recover, then claim runs while there is room. */
  tick(): void {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    try {
      const recovered = this.store.runs.recoverInterruptedRuns();
      for (const id of recovered) {
        this.logger.info({ run_id: id }, 'run was interrupted; queued to resume');
        this.events.runChanged(id);
      }
      while (this.active.size < this.maxRuns) {
        // Each claim stamps a fresh owner id: the fencing token of this claim (see run-fence.ts).
        const owner = processOwnerId();
        const run = this.store.runs.claimNextRun(owner, this.leaseMs);
        if (!run) break;
        this.begin(run, owner);
      }
    } catch (err) {
      this.logger.error({ err }, 'scheduler tick failed');
    } finally {
      this.ticking = false;
    }
  }

  /** Claims one specific queued run and drives it to the end (the CLI's `run`). */
  async runToCompletion(runId: RunId): Promise<Run> {
    const owner = processOwnerId();
    const run = this.store.runs.claimRun(runId, owner, this.leaseMs);
    if (!run) {
      const existing = this.active.get(runId);
      if (existing) return existing.done;
      const current = this.store.queries.getRun(runId);
      if (!current) throw new PanoptesError('not_found', `no run ${runId}`, { where: 'runId' });
      if (TERMINAL_RUN_STATUSES.includes(current.status)) return current;
      throw new PanoptesError('conflict', `run ${runId} is ${current.status} and owned by another scheduler`);
    }
    return this.begin(run, owner).done;
  }

  /** True when this scheduler stopped driving the run because another process took it over. */
  lostRun(runId: RunId): boolean {
    return this.lost.has(runId);
  }

  /** Resolves when every queued or interrupted run has finished (the CLI's `resume`). */
  async finishAll(): Promise<void> {
    for (;;) {
      this.tick();
      if (this.active.size === 0) {
        this.store.runs.recoverInterruptedRuns();
        if (this.store.queries.unfinishedRunIds().length === 0) return;
        // What is left belongs to a live scheduler elsewhere: wait for its lease or its end.
        await pause(this.tickMs);
        continue;
      }
      await Promise.race([...this.active.values()].map((a) => a.done.catch(() => undefined)));
    }
  }

  /** Stops claiming work; in-flight runs are aborted and left for recovery unless `wait`. */
  async stop(opts: { wait?: boolean } = {}): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (!opts.wait) for (const a of this.active.values()) a.controller.abort(new PanoptesError('cancelled', 'scheduler stopped'));
    await Promise.all([...this.active.values()].map((a) => a.done.catch(() => undefined)));
  }

  /** Cancels a run: queued ones at once; running ones abort their jobs. */
  cancel(runId: RunId): Run {
    const run = this.store.runs.cancelRun(runId);
    this.active.get(runId)?.controller.abort(new PanoptesError('cancelled', 'run cancelled'));
    this.events.runChanged(runId);
    return run;
  }

  activeRunIds(): RunId[] {
    return [...this.active.keys()];
  }

  private begin(run: Run, owner: string): ActiveRun {
    const controller = new AbortController();
    // Every call in flight listens on the run's signal; hundreds at once are expected.
    setMaxListeners(0, controller.signal);
    const entry: ActiveRun = { controller, done: Promise.resolve(run) };
    this.active.set(run.id, entry);
    this.lost.delete(run.id);
    entry.done = this.processRun(run, { runId: run.id, owner, leaseMs: this.leaseMs }, controller).finally(() => {
      // A run this process lost and claimed again has a newer entry: leave that one.
      if (this.active.get(run.id) === entry) this.active.delete(run.id);
      if (!this.stopped) this.wake();
    });
    return entry;
  }

  private async processRun(run: Run, fence: RunFence, controller: AbortController): Promise<Run> {
    const signal = controller.signal;
    const logger = this.logger.child({ run_id: run.id });
    logger.info({ models: run.models, epochs: run.epochs, vignettes: run.vignetteCount }, 'run claimed');
    this.events.runChanged(run.id);
    // Losing the run stops its jobs at once: every write after this would be refused anyway.
    let lost = false;
    const onLost = () => {
      if (lost) return;
      lost = true;
      controller.abort(new RunLostError(run.id));
    };
    // Every fenced write extends the lease too; the timer keeps it while no write is made.
    const renew = setInterval(() => {
      try {
        if (!this.store.runs.renewLease(run.id, fence.owner, this.leaseMs) && !signal.aborted) onLost();
      } catch (err) {
        logger.warn({ err }, 'could not renew the lease on the run; trying again');
      }
    }, Math.max(250, this.leaseMs / 3));
    renew.unref();
    let log: ResponseLog | undefined;
    let lander: RecordLander | undefined;
    try {
      log = ResponseLog.open(this.store, this.dataDir, run.id, fence);
      await this.reconcileLog(log, logger, signal);
      lander = new RecordLander(this.store, log, { logger, fence, onLost });
      const jobs = this.store.jobs.insertJobs(run.id, planJobs(run), fence);
      const pending = jobs.filter((j) => j.status === 'pending' || j.status === 'running');
      logger.info({ jobs: jobs.length, pending: pending.length }, 'planned jobs for run');
      this.events.runChanged(run.id);

      const adaptive = await this.adaptiveLoop(run, jobs, logger, signal);
      const ctx = {
        pool: this.pool,
        ledger: new JobLedger({ store: this.store, lander, events: this.events, run, fence, onLost, logger, onAnswered: adaptive ? () => adaptive.answered() : undefined }),
        run,
        logger,
        maxAttempts: this.maxAttempts,
        retryBackoffMs: this.retryBackoffMs,
        signal,
        onLost,
        adaptive,
      };
      // Bounded concurrency over the jobs: `concurrency` loops, each taking the next job. A run posed
      // until decided runs every job at once (each batch waits for all of them; calls stay bounded by the worker).
      let next = 0;
      const loops = Array.from({ length: adaptive ? pending.length : Math.min(run.options.concurrency, pending.length) }, async () => {
        while (next < pending.length && !signal.aborted) {
          const job = pending[next++]!;
          await runJobWithRetry(job, ctx);
        }
      });
      await Promise.all(loops);

      if (lost) return this.gaveUp(run.id, logger);
      if (signal.aborted) {
        // Cancelled runs are settled already; a stopped scheduler hands its run back to the queue.
        const released = this.store.runs.releaseRun(run.id, fence.owner);
        logger.info({ requeued: released }, 'run stopped before the end');
        return this.store.queries.getRun(run.id)!;
      }
      // Records still waiting reach the database and responses.jsonl before the run is settled.
      lander.close();
      if (lost) return this.gaveUp(run.id, logger);
      await this.reconcileLog(log, logger, signal, 'finish');
      if (signal.aborted) return this.store.queries.getRun(run.id)!;
      const { run: settled } = this.store.runs.settleRun(run.id, fence);
      logger.info({ status: settled.status, error: settled.error ?? undefined }, 'run finished');
      return settled;
    } catch (err) {
      if (err instanceof RunLostError || lost) return this.gaveUp(run.id, logger);
      const e = err instanceof Error ? err : new Error(String(err));
      logger.error({ err: e }, 'run failed');
      try {
        return this.store.runs.failRun(run.id, e.message, fence);
      } catch (failErr) {
        if (failErr instanceof RunLostError) return this.gaveUp(run.id, logger);
        // No room even to say the run failed: it stays `running`, nothing half-written, and is taken
        // up again by `panoptes resume` once this process has ended, or when its lease lapses.
        if (isDiskFull(failErr)) {
          const why = isDiskFull(e) ? '' : ` (${e.message})`;
          throw diskFullError(this.store.path, `run ${run.id} stopped${why} and could not be marked failed; resume it once there is room`, failErr);
        }
        throw failErr;
      }
    } finally {
      this.adaptive.delete(run.id);
      clearInterval(renew);
      lander?.close();
      log?.close();
      this.events.runChanged(run.id);
    }
  }

  /** The live loop of a run posed until decided, its stored batches replayed; undefined for any other run. */
  private async adaptiveLoop(run: Run, jobs: readonly Job[], logger: Logger, signal: AbortSignal): Promise<AdaptiveRun | undefined> {
    const untilDecided = run.options.untilDecided;
    if (!untilDecided) return undefined;
    if (!this.adaptiveRows) throw new PanoptesError('internal', `run ${run.id} is posed until decided, and this scheduler reads no scores`);
    const loop = new AdaptiveRun({ run: { ...run, options: { ...run.options, untilDecided } }, store: this.store, rows: this.adaptiveRows, logger, signal, onBatch: () => this.events.runChanged(run.id) });
    this.adaptive.set(run.id, loop);
    await loop.resume(jobs);
    return loop;
  }

  /**
   * Brings the run's responses.jsonl in line with the database: lines it lacks are written, a torn
   * or foreign tail is cut (at the run's end only when the file is not known whole). A write that fails (the disk full) is tried again with a growing pause
   * until `logPatienceMs` has passed; the run then fails with the reason, every record still in the
   * database, and retrying the run finishes the file.
   */
  private async reconcileLog(log: ResponseLog, logger: Logger, signal: AbortSignal, step: 'reconcile' | 'finish' = 'reconcile'): Promise<void> {
    const giveUpAt = Date.now() + this.logPatienceMs;
    for (let failures = 1; ; failures++) {
      try {
        const { cutBytes, written } = await (step === 'finish' ? log.finish() : log.reconcile());
        if (cutBytes > 0 || written > 0) logger.warn({ path: log.path, cutBytes, written }, 'responses.jsonl differed from the database; repaired it');
        return;
      } catch (err) {
        if (err instanceof RunLostError) throw err;
        const reason = err instanceof Error ? err.message : String(err);
        const pauseMs = backoffDelay(LOG_RETRY, failures);
        if (Date.now() + pauseMs > giveUpAt) {
          throw new PanoptesError(
            'internal',
            `could not write ${log.path} (${reason}); every record is in the database: free space, then retry the run (panoptes resume ${log.runId} --retry-failed)`,
          );
        }
        logger.warn({ path: log.path, err: reason, retryInMs: pauseMs }, 'cannot write responses.jsonl; waiting for the disk');
        await pause(pauseMs, signal);
        if (signal.aborted) return;
      }
    }
  }

  /** The run went to another process: this one stops driving it, and the run is not failed for it. */
  private gaveUp(runId: RunId, logger: Logger): Run {
    this.lost.add(runId);
    logger.warn('another process took the run over; stopped its jobs here');
    return this.store.queries.getRun(runId)!;
  }
}
