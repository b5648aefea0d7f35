/**
 * RemoteWorker: the coordinator's actor for one registered worker connection. It implements the
 * same WorkerHandle as LocalWorker, so the scheduler cannot tell them apart: `dispatch` sends an
 * `assign` (split over frames when large), streams the worker's `records` into the job's sink as
 * they arrive, passes on the vignettes it gave up on and the down host it waits for (`gave_up`,
 * `waiting`), stores each call of a staged template's chain as the worker reports it (`stage`), and
 * settles on the matching `result` — matched by job id AND attempt. The calls its jobs bill are
 * counted in the run's ledger before the worker makes them (`call_asked`, see ConnectionCalls). Never more
 * than the declared capacity is assigned (a cancelled job holds its slot until the worker says it
 * stopped). A closed socket, a protocol error or a silent peer fails every job in flight with a
 * retryable `worker_lost`, and the scheduler redelivers each elsewhere.
 * Runs on: Node (core).
 */
import type { Logger } from 'pino';
import {
  PanoptesError,
  toPanoptesError,
  type EvalJob,
  type IndexedVignette,
  type JobVignette,
  type JobOutcome,
  type StageAnswer,
  type Usage,
} from '../domain.js';
import { answerViolation } from '../workers/answer-bounds.js';
import { responseRecord } from '../workers/response-record.js';
import { Semaphore } from '../concurrency/semaphore.js';
import type { JobSink, WorkerHandle, WorkerInfo, WorkerJobProgress } from '../workers/worker-handle.js';
import { FrameBatcher, budgetFor, jsonBytes } from './frame-batcher.js';
import { Heartbeat } from './heartbeat.js';
import type { FrameChannel } from './message-stream.js';
import type { ConnectionCalls, ConnectionCallsFactory } from './call-counting.js';
import type {
  AssignMessage,
  GaveUpMessage,
  RecordsMessage,
  RegisterMessage,
  ResultMessage,
  StageMessage,
  WaitingMessage,
  WireStage,
  WireVignette,
  WorkerMessage,
} from './messages.js';

export interface RemoteWorkerOptions {
  registration: RegisterMessage;
  stream: FrameChannel;
  /** `ip:port` of the worker, as the coordinator sees it. */
  address: string;
  heartbeatMs: number;
  missedHeartbeats: number;
  /** Response text a record may carry, in bytes (PANOPTES_MAX_RESPONSE_BYTES). */
  maxResponseBytes: number;
  logger: Logger;
  /** Counts the calls this worker's jobs bill in the run's ledger before they are made. */
  calls: ConnectionCallsFactory;
  /** Called once when the connection is gone (the listener takes the worker out of the pool). */
  onGone(worker: RemoteWorker, reason: string): void;
  /** Called when the worker reports new progress (the pool tells the UI). */
  onProgress(): void;
}

interface InFlight {
  job: EvalJob;
  attempt: number;
  /** When the attempt was handed to this worker: its records cannot have finished much before. */
  startedAt: number;
  sink: JobSink;
  vignettes: Map<number, IndexedVignette>;
  progress: { vignettesDone: number; usage: Usage };
  /** Whether the worker said the job waits for a down host (and has not said it stopped). */
  waiting: boolean;
  resolve(outcome: JobOutcome): void;
  reject(err: Error): void;
  detach(): void;
}

const keyOf = (jobId: number, attempt: number) => `${jobId}/${attempt}`;

export class RemoteWorker implements WorkerHandle {
  readonly id: string;
  readonly capacity: number;
  readonly models: string[] | 'all';
  readonly version: string;
  readonly address: string;
  readonly connectedAt = Date.now();
  private readonly served: ReadonlySet<string> | null;
  private readonly stream: FrameChannel;
  private readonly slots: Semaphore;
  private readonly inFlight = new Map<string, InFlight>();
  /** Jobs we cancelled whose `result` has not come yet: their late frames are expected, and ignored. */
  private readonly cancelled = new Set<string>();
  private readonly lost = new AbortController();
  private readonly heartbeat: Heartbeat;
  private readonly logger: Logger;
  private readonly opts: RemoteWorkerOptions;
  private readonly calls: ConnectionCalls;
  private lostReason: string | null = null;

  constructor(opts: RemoteWorkerOptions) {
    const reg = opts.registration;
    this.id = reg.worker_id;
    this.capacity = reg.capacity;
    this.models = reg.models;
    this.version = reg.version;
    this.address = opts.address;
    this.served = reg.models === 'all' ? null : new Set(reg.models);
    this.stream = opts.stream;
    this.slots = new Semaphore(reg.capacity);
    this.logger = opts.logger.child({ worker: this.id, address: this.address });
    this.opts = opts;
    this.calls = opts.calls((m) => this.stream.send(m), this.logger);
    this.heartbeat = new Heartbeat({
      intervalMs: opts.heartbeatMs,
      missed: opts.missedHeartbeats,
      send: () => this.stream.send({ type: 'heartbeat' }),
      onDead: (silentMs) => this.stream.close(`no heartbeat for ${silentMs} ms`),
    });
    this.heartbeat.start();
  }

  serves(model: string): boolean {
    return this.served === null || this.served.has(model);
  }

  isAlive(): boolean {
    return this.lostReason === null;
  }

  info(): WorkerInfo {
    const jobs: WorkerJobProgress[] = [...this.inFlight.values()].map((f) => ({
      jobId: f.job.jobId,
      attempt: f.attempt,
      model: f.job.model,
      epoch: f.job.epoch,
      vignetteCount: f.job.vignetteCount,
      vignettesDone: f.progress.vignettesDone,
      usage: { ...f.progress.usage },
    }));
    return {
      id: this.id,
      kind: 'remote',
      capacity: this.capacity,
      models: this.models,
      alive: this.isAlive(),
      inFlight: this.inFlight.size,
      address: this.address,
      version: this.version,
      connectedAt: this.connectedAt,
      jobs,
    };
  }

  async dispatch(job: EvalJob, attempt: number, sink: JobSink, signal: AbortSignal): Promise<JobOutcome> {
    if (!this.isAlive()) throw this.lostError();
    if (!(Symbol.iterator in job.vignettes)) {
      // A run posed until decided hands out its vignettes a batch at a time, as its decision allows: retried on a local worker.
      throw new PanoptesError('invalid_input', `worker ${this.id}: a run posed until decided (--until-decided) runs only on this process's own workers`, { retryable: true });
    }
    // Frames are planned before anything is sent: a vignette too large for any frame fails this job only.
    const { frames, vignettes } = this.assignFrames(job, job.vignettes, attempt);
    try {
      await this.slots.acquire(AbortSignal.any([signal, this.lost.signal]));
    } catch {
      if (!this.isAlive()) throw this.lostError();
      throw new PanoptesError('cancelled', `job ${job.jobId} was cancelled`);
    }
    if (!this.isAlive()) {
      this.slots.release();
      throw this.lostError();
    }
    const key = keyOf(job.jobId, attempt);
    if (this.inFlight.has(key) || this.cancelled.has(key)) {
      this.slots.release();
      throw new PanoptesError('conflict', `job ${job.jobId} attempt ${attempt} is already on worker ${this.id}`);
    }
    return new Promise<JobOutcome>((resolve, reject) => {
      const onAbort = () => this.cancel(key);
      const entry: InFlight = {
        job,
        attempt,
        startedAt: Date.now(),
        sink,
        vignettes,
        progress: { vignettesDone: 0, usage: { inputTokens: 0, outputTokens: 0 } },
        waiting: false,
        resolve,
        reject,
        // A job that ends, on this worker, waits for nothing here any more: the worker may never say so.
        detach: () => {
          signal.removeEventListener('abort', onAbort);
          if (entry.waiting) sink.waiting?.(null);
          entry.waiting = false;
        },
      };
      this.inFlight.set(key, entry);
      signal.addEventListener('abort', onAbort, { once: true });
      for (const frame of frames) this.stream.send(frame);
      this.logger.debug({ run_id: job.runId, job_id: job.jobId, attempt, vignettes: job.vignetteCount, frames: frames.length }, 'assigned job');
    });
  }

  /** One frame from the worker (already validated against the schema). Throwing closes the connection. */
  handle(message: WorkerMessage): void {
    this.heartbeat.seen();
    switch (message.type) {
      case 'records':
        return this.onRecords(message);
      case 'result':
        return this.onResult(message);
      case 'gave_up':
        return this.onGaveUp(message);
      case 'waiting':
        return this.onWaiting(message);
      case 'stage':
        return this.onStage(message);
      case 'call_asked':
        return this.calls.asked(message, this.inFlight.get(keyOf(message.job_id, message.attempt))?.job ?? null);
      case 'call_ended':
        return this.calls.ended(message);
      case 'heartbeat': {
        let changed = false;
        for (const p of message.jobs ?? []) {
          const entry = this.inFlight.get(keyOf(p.job_id, p.attempt));
          if (!entry || entry.progress.vignettesDone === p.vignettes_done) continue;
          entry.progress = { vignettesDone: p.vignettes_done, usage: p.usage };
          changed = true;
        }
        if (changed) this.opts.onProgress();
        return;
      }
    }
  }

  /** The connection is gone: every job in flight fails over. Called by the listener with the reason. */
  lose(reason: string): void {
    if (this.lostReason !== null) return;
    this.lostReason = reason;
    this.heartbeat.stop();
    this.stream.close(reason);
    this.lost.abort();
    const err = this.lostError();
    const failed = this.inFlight.size;
    for (const entry of this.inFlight.values()) {
      entry.detach();
      entry.reject(err);
    }
    this.inFlight.clear();
    this.cancelled.clear();
    this.logger.warn({ reason, failed_jobs: failed }, 'worker connection lost');
    this.opts.onGone(this, reason);
  }

  async close(): Promise<void> {
    this.lose('coordinator closed the connection');
  }

  private lostError(): PanoptesError {
    return new PanoptesError('worker_lost', `worker ${this.id} (${this.address}) lost: ${this.lostReason ?? 'unknown'}`, {
      retryable: true,
    });
  }

  /**
   * The job's frames, and its vignettes by index (records come back naming only the index). A
   * remote job's vignettes are held for as long as it runs: its records are rebuilt from them.
   */
  private assignFrames(job: EvalJob, source: Iterable<JobVignette>, attempt: number): { frames: object[]; vignettes: Map<number, IndexedVignette> } {
    const vignettes = new Map<number, IndexedVignette>();
    const wire: WireVignette[] = [];
    for (const v of source) {
      vignettes.set(v.index, v);
      wire.push({ id: v.id, index: v.index, prompt: v.prompt, system: v.system, messages: v.messages, target: v.target, metadata: v.metadata, finishedStages: v.finishedStages });
    }
    const first: AssignMessage = {
      type: 'assign',
      job_id: job.jobId,
      attempt,
      // The template's scorers are the definitions the same schema parsed when the run was made.
      job: { runId: job.runId, model: job.model, epoch: job.epoch, vignetteCount: wire.length, options: job.options as AssignMessage['job']['options'], vignettes: [] },
      more: false,
    };
    const batches: WireVignette[][] = [];
    const batcher = new FrameBatcher<WireVignette>(
      budgetFor(this.stream.maxFrameBytes, jsonBytes(first)),
      (items) => batches.push(items),
      (v) => `vignette "${v.id}"`,
    );
    for (const v of wire) batcher.push(v);
    batcher.flush();
    const frames: object[] = [{ ...first, job: { ...first.job, vignettes: batches[0] ?? [] }, more: batches.length > 1 }];
    for (let i = 1; i < batches.length; i++) {
      frames.push({ type: 'assign_more', job_id: job.jobId, attempt, vignettes: batches[i], more: i < batches.length - 1 });
    }
    return { frames, vignettes };
  }

  /** Finds the job a frame is about; a frame about a job this worker does not hold is a protocol error. */
  private entryFor(jobId: number, attempt: number, what: string): InFlight | null {
    const key = keyOf(jobId, attempt);
    const entry = this.inFlight.get(key);
    if (entry) return entry;
    if (this.cancelled.has(key)) return null;
    throw new Error(`${what} for job ${jobId} attempt ${attempt}, which this worker does not hold`);
  }

  /** Every record of the frame is checked before any lands: a frame with one bad record lands nothing. */
  private onRecords(message: RecordsMessage): void {
    const entry = this.entryFor(message.job_id, message.attempt, 'records');
    if (!entry) return;
    const window = { startedAt: entry.startedAt, now: Date.now(), maxResponseBytes: this.opts.maxResponseBytes };
    const records = message.records.map((r, i) => {
      const v = entry.vignettes.get(r.vignetteIndex);
      if (!v) throw new Error(`record for vignette index ${r.vignetteIndex}, which job ${message.job_id} does not contain`);
      const violation = answerViolation(r, window);
      if (violation !== null) {
        throw new Error(`"records" frame for job ${message.job_id} attempt ${message.attempt}: records.${i}.${violation}`);
      }
      const record = responseRecord(entry.job, v, r);
      if (r.stages) record.stages = r.stages.map((st, j) => this.checkedStage(st, `"records" frame for job ${message.job_id}: records.${i}.stages.${j}`));
      return record;
    });
    this.intoSink(entry, () => {
      for (const record of records) entry.sink.record(record);
    });
  }

  private onGaveUp(message: GaveUpMessage): void {
    const entry = this.entryFor(message.job_id, message.attempt, 'gave_up');
    if (!entry) return;
    if (!entry.vignettes.has(message.vignette_index)) {
      throw new Error(`gave_up for vignette index ${message.vignette_index}, which job ${message.job_id} does not contain`);
    }
    this.intoSink(entry, () => entry.sink.gaveUp?.({ vignetteIndex: message.vignette_index, attempts: message.attempts, code: message.code, message: message.message }));
  }

  /** A staged call's answer is held to the records' response bound before it is stored. */
  private checkedStage(st: WireStage, where: string): StageAnswer {
    const bytes = Buffer.byteLength(st.response, 'utf8');
    if (bytes > this.opts.maxResponseBytes) throw new Error(`${where}.response: ${bytes} bytes, over the ${this.opts.maxResponseBytes}-byte limit`);
    return st;
  }

  private onStage(message: StageMessage): void {
    const entry = this.entryFor(message.job_id, message.attempt, 'stage');
    if (!entry) return;
    if (!entry.vignettes.has(message.vignette_index)) {
      throw new Error(`stage for vignette index ${message.vignette_index}, which job ${message.job_id} does not contain`);
    }
    const answer = this.checkedStage(message.answer, `"stage" frame for job ${message.job_id}: answer`);
    this.intoSink(entry, () => entry.sink.stage?.(message.vignette_index, message.call_idx, answer));
  }

  private onWaiting(message: WaitingMessage): void {
    const entry = this.entryFor(message.job_id, message.attempt, 'waiting');
    if (!entry) return;
    entry.waiting = message.wait !== null;
    this.intoSink(entry, () => entry.sink.waiting?.(message.wait));
  }

  private onResult(message: ResultMessage): void {
    const key = keyOf(message.job_id, message.attempt);
    const entry = this.entryFor(message.job_id, message.attempt, 'result');
    this.slots.release();
    if (!entry) {
      this.cancelled.delete(key);
      return;
    }
    this.inFlight.delete(key);
    entry.detach();
    // The ends of the job's calls came before its result: the job ends once they are in the ledger.
    void this.calls.written().then(() => this.settle(entry, message));
  }

  private settle(entry: InFlight, message: ResultMessage): void {
    if (message.outcome) {
      entry.resolve({
        jobId: message.job_id,
        attempt: message.attempt,
        workerId: this.id,
        vignettesDone: message.outcome.vignettes_done,
        usage: message.outcome.usage,
      });
    } else {
      const e = message.error!;
      entry.reject(
        new PanoptesError(e.code, `worker ${this.id}: ${e.message}`, {
          retryable: e.retryable,
          retryAfterMs: e.retry_after_ms,
        }),
      );
    }
    this.opts.onProgress();
  }

  private cancel(key: string): void {
    const entry = this.inFlight.get(key);
    if (entry) this.stop(entry, new PanoptesError('cancelled', `job ${entry.job.jobId} was cancelled`));
  }

  /**
   * Hands what a frame carries to the job's sink. The sink is this coordinator's own (the store
   * under it): its failure (a full disk) is no fault of the worker's, so it ends that job with the
   * error and leaves the connection, and the worker's other jobs, as they are.
   */
  private intoSink(entry: InFlight, give: () => void): void {
    try {
      give();
    } catch (err) {
      this.logger.warn({ run_id: entry.job.runId, job_id: entry.job.jobId, attempt: entry.attempt, err: toPanoptesError(err).message }, "a worker's frame could not be stored; its job stops");
      // As thrown: the scheduler tells a run taken over (RunLostError) from any other failure by its class.
      this.stop(entry, err instanceof Error ? err : toPanoptesError(err));
    }
  }

  /** Ends a job on this worker: the worker is told to stop it, and its frames from now on are dropped. */
  private stop(entry: InFlight, err: Error): void {
    const key = keyOf(entry.job.jobId, entry.attempt);
    if (this.inFlight.get(key) !== entry) return;
    this.inFlight.delete(key);
    this.cancelled.add(key);
    entry.detach();
    this.stream.send({ type: 'cancel', job_id: entry.job.jobId, attempt: entry.attempt });
    entry.reject(err);
  }
}

