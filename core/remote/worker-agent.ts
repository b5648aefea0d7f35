/**
 * WorkerAgent: the `panoptes worker` side of the protocol. It connects to a coordinator,
 * registers (token, capacity, the models it serves), runs each assigned job with its own model
 * clients (its own catalog and keys: keys never travel), streams records back in frame-sized
 * batches as they are produced, says at once which vignettes it gave up on and which down host a
 * job waits for, reports per-job progress with every heartbeat, makes each billed call (a sweep
 * call to a provider that bills, a template judge loop's call) only once the coordinator has
 * counted it (WireCallCounter), and answers each
 * assignment with exactly one `result`. When the connection drops it abandons its jobs (the
 * coordinator has already failed them over) and reconnects with backoff, for as long as it runs.
 * Runs on: Node (core).
 */
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import {
  PanoptesError,
  addUsage,
  emptyUsage,
  toPanoptesError,
  type EvalJob,
  type HostWait,
  type JobOptions,
  type JobVignette,
  type ResponseRecord,
  type StageAnswer,
  type Usage,
} from '../domain.js';
import type { ModelClient } from '../models/model-client.js';
import { formatZodIssues } from '../validation.js';
import { LocalWorker } from '../workers/local-worker.js';
import type { StageJudge } from '../workers/staged-eval.js';
import { toStagedTemplate } from '../templates/template-file.js';
import type { GaveUp, JobSink } from '../workers/worker-handle.js';
import { FrameBatcher, budgetFor, jsonBytes } from './frame-batcher.js';
import { Heartbeat } from './heartbeat.js';
import { MessageStream } from './message-stream.js';
import {
  CoordinatorMessageSchema,
  PRE_REGISTER_MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  RegisterSchema,
  type AssignMessage,
  type CoordinatorMessage,
  type JobProgress,
  type RegisterMessage,
  type WireError,
  type WireRecord,
  type WireVignette,
} from './messages.js';
import { connectToCoordinator, type CoordinatorAddress } from './transport.js';
import { billsJudgeCalls, type CountingChannel, type WorkerCallCounting } from './call-counting.js';
import { backoffDelay, pause, type BackoffPolicy } from '../concurrency/backoff.js';

export interface WorkerAgentOptions {
  coordinator: CoordinatorAddress;
  token: string;
  workerId: string;
  /** Jobs run at once. */
  capacity: number;
  models: string[] | 'all';
  /** This machine's model client, its billed calls counted through `counting` (core/service/wire-call-counter.ts). */
  client: ModelClient;
  /** The counter the client and the judge loop count their billed calls with: each session lends it its connection. */
  counting: WorkerCallCounting;
  /** Model calls in flight at once across all jobs. */
  callConcurrency: number;
  version: string;
  logger: Logger;
  /** Scores a staged template's final answer for its judge loop (this machine's own scorers and judges, billed through `counting`). */
  stageJudge?: StageJudge | undefined;
}

/** Pauses between connection attempts: from 100 ms doubling to 5 s, with jitter. */
const RECONNECT: BackoffPolicy = { baseMs: 100, maxMs: 5000, jitter: [0.75, 1.25] };
/** Longest a record waits on the worker before its batch is sent. */
const RECORD_FLUSH_MS = 20;
/** How long a coordinator has to answer `register`. */
const REGISTER_ANSWER_MS = 10_000;

/** Why a session ended. */
interface SessionEnd {
  registered: boolean;
  /** The coordinator refused us (bad token, protocol): retrying cannot help. */
  refusal?: PanoptesError;
  reason: string;
}

/** The engine's job options from an assign frame's (the template in the engine's own shape). */
function jobOptionsOf(wire: AssignMessage['job']['options']): JobOptions {
  const { template, ...rest } = wire;
  return template === undefined ? rest : { ...rest, template: toStagedTemplate(template) };
}

export class WorkerAgent {
  private readonly opts: WorkerAgentOptions;
  private readonly executor: LocalWorker;
  private readonly register: RegisterMessage;

  constructor(opts: WorkerAgentOptions) {
    this.opts = opts;
    this.register = {
      type: 'register',
      protocol: PROTOCOL_VERSION,
      worker_id: opts.workerId,
      capacity: opts.capacity,
      models: opts.models,
      token: opts.token,
      version: opts.version,
    };
    const checked = RegisterSchema.safeParse(this.register);
    if (!checked.success) {
      throw new PanoptesError('invalid_input', `this worker cannot register: ${formatZodIssues(checked.error)}`, { where: 'register' });
    }
    const bytes = jsonBytes(this.register);
    if (bytes > PRE_REGISTER_MAX_FRAME_BYTES) {
      throw new PanoptesError(
        'invalid_input',
        `the register frame would be ${bytes} bytes, over the ${PRE_REGISTER_MAX_FRAME_BYTES}-byte limit: serve fewer models by name, or "all"`,
        { where: '--models' },
      );
    }
    this.executor = new LocalWorker({
      id: opts.workerId,
      client: opts.client,
      callConcurrency: opts.callConcurrency,
      capacity: opts.capacity,
      stageJudge: opts.stageJudge,
    });
  }

  /**
   * Serves coordinators until `signal` aborts. Rejects only when a coordinator refuses this worker
   * (token, protocol, id): retrying cannot help. Anything else — unreachable, TLS not verified, a
   * dropped connection — is logged and retried with backoff.
   */
  async run(signal: AbortSignal): Promise<void> {
    const { logger } = this.opts;
    let failures = 0;
    const where = `${this.opts.coordinator.host}:${this.opts.coordinator.port}`;
    while (!signal.aborted) {
      let end: SessionEnd | undefined;
      try {
        const socket = await connectToCoordinator(this.opts.coordinator, REGISTER_ANSWER_MS);
        end = await new Session(this.opts, this.executor, this.opts.counting, this.register, socket, signal).done;
      } catch (err) {
        logger.warn({ coordinator: where, err: toPanoptesError(err).message, retry_in_ms: backoffDelay(RECONNECT, failures + 1, undefined, () => 0.5) }, 'cannot reach coordinator');
      }
      if (end?.refusal) throw end.refusal;
      failures = end?.registered ? 1 : failures + 1;
      if (end && !signal.aborted) logger.warn({ coordinator: where, reason: end.reason }, 'disconnected from coordinator');
      if (signal.aborted) break;
      await pause(backoffDelay(RECONNECT, failures), signal);
    }
  }

  async close(): Promise<void> {
    await this.executor.close();
  }
}

interface RunningJob {
  jobId: number;
  runId: string;
  model: string;
  /** Whether its template has a judge loop (whose calls are billed to it). */
  judged: boolean;
  attempt: number;
  controller: AbortController;
  vignettesDone: number;
  usage: Usage;
}

interface Assembling {
  first: AssignMessage;
  vignettes: WireVignette[];
}

const keyOf = (jobId: number, attempt: number) => `${jobId}/${attempt}`;

/** One connection's worth of conversation with a coordinator. */
class Session {
  readonly done: Promise<SessionEnd>;
  private readonly stream: MessageStream<CoordinatorMessage>;
  private readonly running = new Map<string, RunningJob>();
  private readonly assembling = new Map<string, Assembling>();
  private heartbeat: Heartbeat | null = null;
  private registered = false;
  private refusal: PanoptesError | undefined;
  private readonly logger: Logger;
  private readonly counting: CountingChannel;

  constructor(
    private readonly opts: WorkerAgentOptions,
    private readonly executor: LocalWorker,
    private readonly counter: WorkerCallCounting,
    register: RegisterMessage,
    socket: Socket,
    signal: AbortSignal,
  ) {
    this.logger = opts.logger;
    let settle!: (end: SessionEnd) => void;
    this.done = new Promise((resolve) => (settle = resolve));
    this.counting = {
      send: (m) => this.stream.send(m),
      jobOf: (call) => {
        for (const job of this.running.values()) {
          if (job.runId === call.runId && (call.kind === 'sweep' ? job.model === call.model : job.judged)) return { jobId: job.jobId, attempt: job.attempt };
        }
        return null;
      },
    };
    const onStop = () => this.stream.close('worker stopping');
    const registerTimer = setTimeout(() => this.stream.close(`no answer to register within ${REGISTER_ANSWER_MS} ms`), REGISTER_ANSWER_MS);
    this.stream = new MessageStream<CoordinatorMessage>(socket, {
      schema: CoordinatorMessageSchema,
      maxFrameBytes: PRE_REGISTER_MAX_FRAME_BYTES,
      onMessage: (m) => this.handle(m, registerTimer),
      onClose: (reason) => {
        clearTimeout(registerTimer);
        signal.removeEventListener('abort', onStop);
        this.heartbeat?.stop();
        this.counter.detach(this.counting, reason);
        const lost = new PanoptesError('worker_lost', `connection to the coordinator closed: ${reason}`, { retryable: true });
        for (const job of this.running.values()) job.controller.abort(lost);
        this.running.clear();
        this.assembling.clear();
        settle({ registered: this.registered, reason, ...(this.refusal ? { refusal: this.refusal } : {}) });
      },
    });
    signal.addEventListener('abort', onStop, { once: true });
    if (signal.aborted) onStop();
    this.stream.send(register);
  }

  private handle(message: CoordinatorMessage, registerTimer: NodeJS.Timeout): void {
    this.heartbeat?.seen();
    switch (message.type) {
      case 'registered': {
        if (this.registered) throw new Error('registered twice');
        clearTimeout(registerTimer);
        this.registered = true;
        this.stream.maxFrameBytes = message.max_frame_bytes;
        this.heartbeat = new Heartbeat({
          intervalMs: message.heartbeat_ms,
          missed: message.missed_heartbeats,
          send: () => this.stream.send({ type: 'heartbeat', jobs: this.progress() }),
          onDead: (silentMs) => this.stream.close(`no heartbeat from the coordinator for ${silentMs} ms`),
        });
        this.heartbeat.start();
        this.counter.attach(this.counting);
        this.logger.info({ worker: this.opts.workerId, capacity: this.opts.capacity }, 'registered with coordinator');
        return;
      }
      case 'error':
        this.refusal = new PanoptesError(message.code, `the coordinator refused this worker: ${message.message}`);
        this.stream.close(`refused: ${message.message}`);
        return;
      case 'heartbeat':
        return;
      case 'call_counted':
      case 'call_refused':
        // A refusal no call waits for answers a `call_ended` the coordinator did not take.
        if (!this.counter.answer(message) && message.type === 'call_refused') this.logger.warn({ call: message.call_id, reason: message.error.message }, 'coordinator refused a call end');
        return;
      case 'assign': {
        if (!this.registered) throw new Error('assign before registered');
        const key = keyOf(message.job_id, message.attempt);
        if (this.running.has(key) || this.assembling.has(key)) throw new Error(`job ${key} assigned twice`);
        if (this.running.size + this.assembling.size >= this.opts.capacity) {
          throw new Error(`assigned more than the declared capacity of ${this.opts.capacity} jobs`);
        }
        const entry = { first: message, vignettes: [...message.job.vignettes] };
        if (message.more) this.assembling.set(key, entry);
        else this.start(entry);
        return;
      }
      case 'assign_more': {
        const key = keyOf(message.job_id, message.attempt);
        const entry = this.assembling.get(key);
        if (!entry) throw new Error(`assign_more for job ${key}, which is not being assigned`);
        for (const v of message.vignettes) entry.vignettes.push(v);
        if (!message.more) {
          this.assembling.delete(key);
          this.start(entry);
        }
        return;
      }
      case 'cancel': {
        const key = keyOf(message.job_id, message.attempt);
        // A cancel may cross the job's result on the wire: one we no longer hold is simply done.
        this.running.get(key)?.controller.abort(new PanoptesError('cancelled', `job ${message.job_id} cancelled by the coordinator`));
        if (this.assembling.delete(key)) {
          const error: WireError = { code: 'cancelled', message: `job ${message.job_id} cancelled before it started`, retryable: false };
          this.sendResult(message.job_id, message.attempt, { error });
        }
        return;
      }
    }
  }

  private progress(): JobProgress[] {
    return [...this.running.values()].map((j) => ({ job_id: j.jobId, attempt: j.attempt, vignettes_done: j.vignettesDone, usage: j.usage }));
  }

  private start({ first, vignettes }: Assembling): void {
    const { job_id: jobId, attempt } = first;
    if (vignettes.length !== first.job.vignetteCount) {
      throw new Error(`job ${jobId} announced ${first.job.vignetteCount} vignettes but ${vignettes.length} arrived`);
    }
    const job: EvalJob = {
      jobId,
      runId: first.job.runId,
      model: first.job.model,
      epoch: first.job.epoch,
      vignettes: vignettes as JobVignette[],
      vignetteCount: vignettes.length,
      options: jobOptionsOf(first.job.options),
    };
    const state: RunningJob = { jobId, runId: job.runId, model: job.model, judged: billsJudgeCalls(job.options), attempt, controller: new AbortController(), vignettesDone: 0, usage: emptyUsage() };
    this.running.set(keyOf(jobId, attempt), state);
    const envelope = { type: 'records', job_id: jobId, attempt, records: [] };
    const batcher = new FrameBatcher<WireRecord>(
      budgetFor(this.stream.maxFrameBytes, jsonBytes(envelope)),
      (records) => this.stream.send({ ...envelope, records }),
      (r) => `the record for vignette index ${r.vignetteIndex}`,
    );
    let flushTimer: NodeJS.Timeout | null = null;
    const flush = () => {
      if (flushTimer) clearTimeout(flushTimer);
      flushTimer = null;
      batcher.flush();
    };
    const sink: JobSink = {
      record: (r: ResponseRecord) => {
        batcher.push({
          vignetteIndex: r.vignetteIndex,
          response: r.response,
          usage: r.usage,
          latencyMs: r.latencyMs,
          host: r.host,
          cached: r.cached,
          finishedAt: r.finishedAt,
          ...(r.finishReason === undefined ? {} : { finishReason: r.finishReason }),
          ...(r.stages === undefined ? {} : { stages: r.stages }),
        });
        state.vignettesDone += 1;
        addUsage(state.usage, r.usage);
        flushTimer ??= setTimeout(flush, RECORD_FLUSH_MS);
      },
      gaveUp: (f: GaveUp) => {
        this.stream.send({
          type: 'gave_up',
          job_id: jobId,
          attempt,
          vignette_index: f.vignetteIndex,
          attempts: f.attempts,
          code: f.code,
          message: f.message.slice(0, 4000),
        });
      },
      waiting: (wait: HostWait | null) => {
        this.stream.send({ type: 'waiting', job_id: jobId, attempt, wait: wait && { host: wait.host.slice(0, 400), since: wait.since } });
      },
      // Sent at once, not batched: the coordinator stores it, so a job redelivered after this worker dies does not pose it again.
      stage: (vignetteIndex: number, callIdx: number, answer: StageAnswer) => {
        this.stream.send({ type: 'stage', job_id: jobId, attempt, vignette_index: vignetteIndex, call_idx: callIdx, answer });
      },
    };
    this.executor.dispatch(job, attempt, sink, state.controller.signal).then(
      (outcome) => {
        flush();
        this.running.delete(keyOf(jobId, attempt));
        this.sendResult(jobId, attempt, { outcome: { vignettes_done: outcome.vignettesDone, usage: outcome.usage } });
      },
      (err: unknown) => {
        flush();
        this.running.delete(keyOf(jobId, attempt));
        const e = toPanoptesError(err);
        this.sendResult(jobId, attempt, {
          error: {
            code: e.code,
            message: e.message.slice(0, 4000),
            retryable: e.retryable,
            retry_after_ms: e.retryAfterMs,
          },
        });
      },
    );
  }

  private sendResult(jobId: number, attempt: number, body: { outcome: { vignettes_done: number; usage: Usage } } | { error: WireError }): void {
    this.stream.send({ type: 'result', job_id: jobId, attempt, ...body });
  }
}
