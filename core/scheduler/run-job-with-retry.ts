/**
 * runJobWithRetry: drives one job to a settled state. Each attempt goes to a worker from the pool
 * (avoiding workers it already failed on, while others serve the model) and poses only the
 * vignettes that have no record yet. A retryable failure tries again, up to `maxAttempts`; a
 * permanent one, or the last, fails the job with its reason. Every write is fenced by the run's
 * owner: once the run went to another process, the job stops at once and writes nothing more.
 * What lands and how an attempt ends is the job ledger's; this file only decides what happens next.
 * Runs on: Node (core).
 */
import type { Logger } from 'pino';
import { toPanoptesError, type Job, type Run } from '../domain.js';
import { RunLostError } from '../store/run-fence.js';
import type { WorkerPool } from '../workers/worker-pool.js';
import type { AdaptiveRun } from './adaptive-run.js';
import type { JobLedger } from './job-ledger.js';
import { backoffDelay, pause } from '../concurrency/backoff.js';

export interface JobContext {
  pool: WorkerPool;
  ledger: JobLedger;
  run: Run;
  logger: Logger;
  maxAttempts: number;
  /** Pause before a retry when the failure did not say how long (default 250 ms, doubling). */
  retryBackoffMs: number;
  signal: AbortSignal;
  /** Called when a fenced write finds the run gone to another process. */
  onLost: () => void;
  /** A run posed until decided: its jobs' vignettes come batch by batch from its loop. */
  adaptive?: AdaptiveRun | undefined;
}

export async function runJobWithRetry(job: Job, ctx: JobContext): Promise<void> {
  try {
    await driveJob(job, ctx);
  } catch (err) {
    if (!(err instanceof RunLostError)) throw err;
    ctx.onLost();
  }
}

async function driveJob(job: Job, ctx: JobContext): Promise<void> {
  const { pool, ledger, run, signal } = ctx;
  const logger = ctx.logger.child({ job_id: job.id, model: job.model, epoch: job.epoch });
  const triedWorkers = new Set<string>();
  for (let tries = 1; ; tries++) {
    let slot;
    try {
      slot = await pool.acquire(job.model, triedWorkers, signal);
    } catch (err) {
      if (signal.aborted) return;
      const e = toPanoptesError(err);
      ledger.failUnstarted(job, e.message);
      ctx.adaptive?.jobFailed(job.id);
      logger.warn({ err: e.message }, 'job failed: no worker');
      return;
    }
    const worker = slot.worker;
    try {
      const attempt = ledger.begin(job, worker.id);
      if (attempt === null) return; // settled elsewhere (cancelled)
      try {
        const pending = ledger.pending(job);
        logger.debug({ attempt: attempt.number, worker: worker.id, vignettes: pending.count }, 'dispatching job');
        const { concurrency: _jobs, endWithFailures: _end, untilDecided: _decided, ...options } = run.options;
        const vignettes = ctx.adaptive ? ctx.adaptive.source(job) : pending.vignettes;
        const outcome = await worker.dispatch(
          { jobId: job.id, runId: run.id, model: job.model, epoch: job.epoch, vignettes, vignetteCount: pending.count, options },
          attempt.number,
          attempt.sink,
          signal,
        );
        const landed = attempt.settle(outcome, ctx.adaptive?.posedTo(job.model));
        logger.debug({ attempt: attempt.number, landed }, 'job finished');
        return;
      } catch (err) {
        attempt.abandon(); // what landed before the failure stays landed
        if (err instanceof RunLostError) throw err;
        const e = toPanoptesError(err);
        if (signal.aborted) return;
        triedWorkers.add(worker.id);
        if (!e.retryable || tries >= ctx.maxAttempts) {
          attempt.fail(e.message);
          ctx.adaptive?.jobFailed(job.id);
          logger.warn({ attempt: attempt.number, err: e.message, code: e.code }, 'job failed');
          return;
        }
        attempt.retry(e.message);
        logger.info({ attempt: attempt.number, err: e.message, code: e.code }, 'job attempt failed; retrying');
        // A lost worker says nothing about the job: redeliver at once. Otherwise back off.
        if (e.code !== 'worker_lost') await pause(backoffDelay({ baseMs: ctx.retryBackoffMs, maxMs: 30_000 }, tries, e.retryAfterMs), signal);
      }
    } finally {
      slot.release();
    }
  }
}
