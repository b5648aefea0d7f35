/**
 * runJobWithRetry: drives one job to a settled state. Each attempt goes to a worker from the pool
 * (avoiding workers it already failed on, while others serve the model) and poses only the
 * vignettes that have no record yet. A retryable failure tries again, up to `maxAttempts`; a
 * permanent one, or the last, fails the job with its reason. Every write is fenced by the run's
 * owner: once the run went to another process, the job stops at once and writes nothing more.
 * Runs on: Node (core).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { toPanoptesError, type HostWait, type Job, type Run } from '../domain.js';
import { RunLostError, type RunFence } from '../store/run-fence.js';
import type { Store } from '../store/store.js';
import type { GaveUp } from '../workers/worker-handle.js';
import type { WorkerPool } from '../workers/worker-pool.js';
import type { EngineEvents } from './engine-events.js';
import type { RecordLander } from './record-lander.js';

export interface JobContext {
  store: Store;
  pool: WorkerPool;
  lander: RecordLander;
  run: Run;
  events: EngineEvents;
  logger: Logger;
  maxAttempts: number;
  /** Pause before a retry when the failure did not say how long (default 250 ms, doubling). */
  retryBackoffMs: number;
  signal: AbortSignal;
  fence: RunFence;
  /** Called when a fenced write finds the run gone to another process. */
  onLost: () => void;
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
  const { fence } = ctx;
  const { store, pool, run, events, signal } = ctx;
  const logger = ctx.logger.child({ job_id: job.id, model: job.model, epoch: job.epoch });
  const triedWorkers = new Set<string>();
  for (let tries = 1; ; tries++) {
    let lease;
    try {
      lease = await pool.acquire(job.model, triedWorkers, signal);
    } catch (err) {
      if (signal.aborted) return;
      const e = toPanoptesError(err);
      const attempt = store.startAttempt(job.id, 'unassigned', fence);
      if (attempt !== null) store.failJob(job.id, attempt, e.message, fence);
      logger.warn({ err: e.message }, 'job failed: no worker');
      events.jobChanged(run.id, job.id);
      return;
    }
    const worker = lease.worker;
    let attempt: number | null;
    try {
      attempt = store.startAttempt(job.id, worker.id, fence);
    } catch (err) {
      lease.release();
      throw err;
    }
    if (attempt === null) {
      lease.release();
      return; // settled elsewhere (cancelled)
    }
    events.jobChanged(run.id, job.id);
    const landing = ctx.lander.sink(job.id, attempt, () => events.jobChanged(run.id, job.id));
    // Records land through the lander; what the job gives up on and waits for is noted at once.
    const sink = Object.assign(landing, {
      gaveUp: (f: GaveUp) => {
        store.recordVignetteFailure(job.id, attempt, f);
        events.jobChanged(run.id, job.id);
      },
      waiting: (wait: HostWait | null) => {
        store.setJobWaiting(job.id, attempt, wait);
        events.jobChanged(run.id, job.id);
        events.runChanged(run.id);
      },
    });
    try {
      // Only the vignettes with no record yet: a redelivered job re-poses nothing that landed.
      const vignetteCount = run.vignetteCount - store.landedCount(job.id);
      const vignettes = store.pendingVignettes(run.id, job.id);
      logger.debug({ attempt, worker: worker.id, vignettes: vignetteCount }, 'dispatching job');
      const { concurrency: _jobs, endWithFailures: _end, ...options } = run.options;
      const outcome = await worker.dispatch(
        { jobId: job.id, runId: run.id, model: job.model, epoch: job.epoch, vignettes, vignetteCount, options },
        attempt,
        sink,
        signal,
      );
      const result = store.recordJobOutcome(outcome, sink.drain(), fence);
      ctx.lander.outcomeLanded(result);
      logger.debug({ attempt, landed: result.landed }, 'job finished');
      events.jobChanged(run.id, job.id);
      events.runChanged(run.id);
      return;
    } catch (err) {
      sink.close(); // what landed before the failure stays landed
      if (err instanceof RunLostError) throw err;
      const e = toPanoptesError(err);
      events.jobChanged(run.id, job.id);
      if (signal.aborted) return;
      triedWorkers.add(worker.id);
      if (!e.retryable || tries >= ctx.maxAttempts) {
        store.failJob(job.id, attempt, e.message, fence);
        logger.warn({ attempt, err: e.message, code: e.code }, 'job failed');
        events.runChanged(run.id);
        return;
      }
      store.noteRetry(job.id, attempt, e.message, fence);
      logger.info({ attempt, err: e.message, code: e.code }, 'job attempt failed; retrying');
      // A lost worker says nothing about the job: redeliver at once. Otherwise back off.
      const wait = e.code === 'worker_lost' ? 0 : Math.min(30_000, e.retryAfterMs ?? ctx.retryBackoffMs * 2 ** (tries - 1));
      await sleep(wait, undefined, { signal }).catch(() => undefined);
    } finally {
      lease.release();
    }
  }
}
