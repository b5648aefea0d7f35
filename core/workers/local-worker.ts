/**
 * LocalWorker: runs jobs in this process with runEval, under one bound on model calls in flight
 * shared by all its jobs.
 * Runs on: Node (core).
 */
import type { EvalJob, JobOutcome } from '../domain.js';
import type { ModelClient, Unavailable } from '../models/model-client.js';
import { runEval } from './run-eval.js';
import type { StageJudge } from './staged-eval.js';
import { Semaphore } from '../concurrency/semaphore.js';
import type { JobSink, WorkerHandle, WorkerInfo } from './worker-handle.js';

export interface LocalWorkerOptions {
  id?: string | undefined;
  client: ModelClient;
  /** Model calls in flight at once, across all jobs (default 8). */
  callConcurrency?: number | undefined;
  /** Jobs taken at once (default 64: the call bound is what limits work). */
  capacity?: number | undefined;
  callAttempts?: number | undefined;
  backoffMs?: number | undefined;
  /** Scores a staged template's final answer for its judge loop. */
  stageJudge?: StageJudge | undefined;
}

export class LocalWorker implements WorkerHandle {
  readonly id: string;
  readonly capacity: number;
  private readonly client: ModelClient;
  private readonly calls: Semaphore;
  private readonly opts: LocalWorkerOptions;
  private readonly connectedAt = Date.now();
  private inFlight = 0;
  private closed = false;

  constructor(opts: LocalWorkerOptions) {
    this.id = opts.id ?? 'local';
    this.capacity = opts.capacity ?? 64;
    this.client = opts.client;
    this.calls = new Semaphore(opts.callConcurrency ?? 8);
    this.opts = opts;
  }

  serves(model: string): boolean {
    return this.client.serves(model);
  }

  unavailableReason(model: string): Unavailable | undefined {
    return this.client.unavailableReason?.(model);
  }

  isAlive(): boolean {
    return !this.closed;
  }

  info(): WorkerInfo {
    return {
      id: this.id,
      kind: 'local',
      capacity: this.capacity,
      models: 'all',
      alive: !this.closed,
      inFlight: this.inFlight,
      connectedAt: this.connectedAt,
    };
  }

  async dispatch(job: EvalJob, attempt: number, sink: JobSink, signal: AbortSignal): Promise<JobOutcome> {
    this.inFlight += 1;
    try {
      return await runEval(job, {
        client: this.client,
        attempt,
        workerId: this.id,
        sink,
        calls: this.calls,
        signal,
        callAttempts: this.opts.callAttempts,
        backoffMs: this.opts.backoffMs,
        stageJudge: this.opts.stageJudge,
      });
    } finally {
      this.inFlight -= 1;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.client.close?.();
  }
}
