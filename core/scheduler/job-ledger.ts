/**
 * The job ledger: the one owner of a job's record path. An attempt begins here (`begin`: the attempt
 * row, and the sink its worker delivers to) and ends here with at most one verdict: `settle` lands the
 * outcome with whatever the sink still buffers in one transaction, then hands what landed to
 * responses.jsonl; or `abandon` closes the sink (what landed stays landed), followed by `retry` or
 * `fail`, which note the failure, or by nothing when the run stopped or was lost. Nothing else lands records or feeds the response log. The rule
 * "responses.jsonl takes a record only once it is durable, in sequence order" lives in the lander
 * this ledger drives, and the SQL in the store. Every write is fenced by the run's owner.
 * Runs on: Node (core).
 */
import type { Logger } from 'pino';
import type { HostWait, Job, JobOutcome, Run } from '../domain.js';
import { RunLostError, type RunFence } from '../store/run-fence.js';
import type { Store } from '../store/store.js';
import type { EngineEvents } from './engine-events.js';
import type { AttemptSink, RecordLander } from './record-lander.js';

export interface JobLedgerDeps {
  store: Store;
  lander: RecordLander;
  events: EngineEvents;
  run: Run;
  fence: RunFence;
  /** Hears of every landing and give-up of the run's jobs (a run posed until decided waits on them between batches). */
  onAnswered?: (() => void) | undefined;
  /** Called when a fenced write finds the run gone to another process. */
  onLost?: (() => void) | undefined;
  logger?: Logger | undefined;
}

export class JobLedger {
  constructor(private readonly deps: JobLedgerDeps) {}

  /** Starts an attempt of `job` on `workerId`; null when the job was settled elsewhere (cancelled). */
  begin(job: Job, workerId: string): JobAttempt | null {
    const { store, events, run, fence } = this.deps;
    const attempt = store.jobs.startAttempt(job.id, workerId, fence);
    if (attempt === null) return null;
    events.jobChanged(run.id, job.id);
    const landed = () => {
      events.jobChanged(run.id, job.id);
      this.deps.onAnswered?.();
    };
    return new JobAttempt(this.deps, job, attempt, landed);
  }

  /** Fails a job that could not start (no worker serves its model), as an attempt of its own. */
  failUnstarted(job: Job, error: string): void {
    const { store, events, run, fence } = this.deps;
    const attempt = store.jobs.startAttempt(job.id, 'unassigned', fence);
    if (attempt !== null) store.jobs.failJob(job.id, attempt, error, fence);
    events.jobChanged(run.id, job.id);
  }

  /** The vignettes of `job` with no record yet, and how many: a redelivered job re-poses nothing that landed. */
  pending(job: Job): { vignettes: ReturnType<Store['jobs']['pendingVignettes']>; count: number } {
    const { store, run } = this.deps;
    return { vignettes: store.jobs.pendingVignettes(run.id, job.id), count: run.vignetteCount - store.jobs.landedCount(job.id) };
  }
}

/** One attempt of a job, from its start to the one way it ends. */
export class JobAttempt {
  /** Where the worker delivers, the lander's sink itself: records wait there for the lander's commit; give-ups and waits are noted at once. */
  readonly sink: AttemptSink;

  constructor(
    private readonly deps: JobLedgerDeps,
    private readonly job: Job,
    readonly number: number,
    onLanded: () => void,
  ) {
    const { store, lander, events, run } = deps;
    this.sink = lander.sink(job.id, number, onLanded, {
      gaveUp: (f) => {
        store.jobs.recordVignetteFailure(job.id, number, f);
        events.jobChanged(run.id, job.id);
        deps.onAnswered?.();
      },
      waiting: (wait: HostWait | null) => {
        store.jobs.setJobWaiting(job.id, number, wait);
        events.jobChanged(run.id, job.id);
        events.runChanged(run.id);
      },
      // Each finished call of a staged vignette is stored at once (fenced), not with the record: a resumed job reuses it.
      stage: (vignetteIndex, callIdx, answer) => {
        try {
          store.stages.finish(job.id, number, vignetteIndex, callIdx, answer, deps.fence);
        } catch (err) {
          if (err instanceof RunLostError) deps.onLost?.();
          else deps.logger?.warn({ err, job_id: job.id }, 'could not store a finished stage; a resumed run poses it again');
        }
      },
    });
  }

  /**
   * Lands the outcome and every record still buffered in one transaction; false when a newer
   * attempt or a cancel got there first. `posed`: the vignettes the job was given, when a run posed
   * until decided stopped its model before the end of the manifest.
   */
  settle(outcome: JobOutcome, posed?: number): boolean {
    const { store, lander, events, run, fence } = this.deps;
    const result = store.records.settle(outcome, this.sink.drain(), fence, posed);
    lander.outcomeLanded(result);
    events.jobChanged(run.id, this.job.id);
    events.runChanged(run.id);
    return result.landed;
  }

  /** Ends the attempt without a verdict (the run stopped, or the worker's failure is still being judged): what landed stays landed. */
  abandon(): void {
    this.sink.close();
    this.deps.events.jobChanged(this.deps.run.id, this.job.id);
  }

  /** The attempt failed and another will follow. */
  retry(error: string): void {
    this.deps.store.jobs.noteRetry(this.job.id, this.number, error, this.deps.fence);
  }

  /** The attempt failed and the job with it. */
  fail(error: string): void {
    const { store, events, run, fence } = this.deps;
    store.jobs.failJob(this.job.id, this.number, error, fence);
    events.runChanged(run.id);
  }
}
