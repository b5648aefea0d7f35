/**
 * runEval: poses each vignette of a job to a ModelClient and hands one ResponseRecord per vignette
 * to the sink as it arrives. Calls run under a shared semaphore (the worker's bound on model calls
 * in flight); a retryable failure is retried with backoff, honouring Retry-After. A vignette
 * still without an answer after `callAttempts` tries is given up on: the sink hears of it with its
 * last error, the job goes on with the rest, and then fails, not to be redelivered (its vignettes'
 * attempts are spent; `retryRun` brings them back). While calls wait for a host that is down, the
 * sink hears which one, so the job shows "waiting for host". An answer out of bounds (answer-bounds.ts)
 * fails its vignette with an error naming the field, and lands nothing. The vignettes may come from
 * an async source that waits between batches (a run posed until decided): no call permit is held
 * while it waits, so the calls in flight finish and land.
 * Runs on: Node (core).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  PanoptesError,
  addUsage,
  emptyUsage,
  toPanoptesError,
  type EvalJob,
  type HostWait,
  type IndexedVignette,
  type JobOutcome,
  type JobVignette,
  type StageAnswer,
} from '../domain.js';
import type { ChatMessage, ModelClient, ModelResponse } from '../models/model-client.js';
import { assertAnswerBounds, maxResponseBytes } from './answer-bounds.js';
import { responseRecord } from './response-record.js';
import { backoffDelay } from '../concurrency/backoff.js';
import type { Semaphore } from '../concurrency/semaphore.js';
import { runStagedTemplate, type StageJudge } from './staged-eval.js';
import type { JobSink } from './worker-handle.js';

export interface RunEvalContext {
  client: ModelClient;
  attempt: number;
  workerId: string;
  sink: JobSink;
  /** Bounds model calls in flight across every job of the worker. */
  calls: Semaphore;
  signal: AbortSignal;
  /** Tries per vignette before it is given up on (default 6). */
  callAttempts?: number | undefined;
  /** First backoff in ms; doubles each retry, with jitter (default 100). */
  backoffMs?: number | undefined;
  /** Longest single wait, even if a host asks for more (default 30 s). */
  maxBackoffMs?: number | undefined;
  /** Response text a record may hold, in bytes (default: PANOPTES_MAX_RESPONSE_BYTES, else 4 MiB). */
  maxResponseBytes?: number | undefined;
  /** Scores a staged template's final answer for its judge loop. */
  stageJudge?: StageJudge | undefined;
}

/**
 * Failures that are the job's, not a vignette's: a refused key, spent quota or budget, no host the
 * privacy mode allows. No vignette is given up on for them; the job fails as a whole, as before.
 */
const JOB_LEVEL: ReadonlySet<string> = new Set(['auth', 'quota', 'budget_exceeded', 'privacy_blocked', 'no_host']);

/** What a vignette poses: its conversation, or its system prompt (if any) and prompt. */
export function messagesOf(v: IndexedVignette): ChatMessage[] {
  if (v.messages !== undefined) return v.messages;
  return v.system ? [{ role: 'system', content: v.system }, { role: 'user', content: v.prompt }] : [{ role: 'user', content: v.prompt }];
}

export async function runEval(job: EvalJob, ctx: RunEvalContext): Promise<JobOutcome> {
  const usage = emptyUsage();
  let done = 0;
  const failures: PanoptesError[] = [];
  let fatal: PanoptesError | undefined;
  const inFlight = new Set<Promise<void>>();
  const callAttempts = ctx.callAttempts ?? 6;
  const backoffMs = ctx.backoffMs ?? 100;
  const maxBackoffMs = ctx.maxBackoffMs ?? 30_000;
  const responseLimit = ctx.maxResponseBytes ?? maxResponseBytes();
  const startedAt = Date.now();

  // Calls waiting for a down host, by call; the job shows the first of them while any waits.
  const waits = new Map<symbol, HostWait>();
  let shown: HostWait | null = null;
  const showWaits = () => {
    const next = waits.values().next().value ?? null;
    if (next?.host === shown?.host) return;
    shown = next;
    ctx.sink.waiting?.(next);
  };

  const call = async (v: IndexedVignette, tries: { n: number }, messages: ChatMessage[] = messagesOf(v)): Promise<ModelResponse> => {
    const id = Symbol(v.id);
    const onHostWait = (w: HostWait | null) => {
      if (w) waits.set(id, w);
      else waits.delete(id);
      showWaits();
    };
    for (let i = 1; ; i++) {
      tries.n = i;
      try {
        return await ctx.client.generate({
          model: job.model,
          messages,
          sampling: job.options.sampling,
          privacy: job.options.privacy,
          skipPromptCache: job.options.skipPromptCache,
          epoch: job.epoch,
          shareCacheAcrossEpochs: job.options.shareCacheAcrossEpochs,
          signal: ctx.signal,
          runId: job.runId,
          vignette: v.target === undefined ? { id: v.id } : { id: v.id, target: v.target },
          onHostWait,
        });
      } catch (err) {
        const e = toPanoptesError(err);
        if (!e.retryable || i >= callAttempts || ctx.signal.aborted) throw e;
        const wait = backoffDelay({ baseMs: backoffMs, maxMs: maxBackoffMs, jitter: [0.5, 1.5] }, i, e.retryAfterMs);
        // The permit is released while waiting so other vignettes keep the calls busy.
        ctx.calls.release();
        try {
          await sleep(wait, undefined, { signal: ctx.signal });
        } finally {
          await ctx.calls.acquire();
        }
      }
    }
  };

  const pose = async (v: JobVignette): Promise<void> => {
    const tries = { n: 0 };
    try {
      const template = job.options.template;
      const resume = { finished: v.finishedStages, onCall: (i: number, st: StageAnswer) => ctx.sink.stage?.(v.index, i, st) };
      const judge = ctx.stageJudge && { runId: job.runId, signal: ctx.signal, verdict: ctx.stageJudge };
      const staged = template ? await runStagedTemplate(template, v, (messages) => call(v, tries, messages), judge, resume) : undefined;
      const res = staged ?? (await call(v, tries));
      const text = 'response' in res ? res.response : res.text;
      const answer = {
        response: text,
        usage: res.usage,
        latencyMs: res.latencyMs,
        host: res.host,
        cached: res.cached,
        finishedAt: Date.now(),
        finishReason: 'finishReason' in res ? res.finishReason : undefined,
      };
      // An answer out of bounds fails its call (not retried: the host would say the same again).
      assertAnswerBounds(answer, { startedAt, now: answer.finishedAt, maxResponseBytes: responseLimit }, res.host);
      const record = responseRecord(job, v, answer);
      if (staged) record.stages = staged.stages;
      addUsage(usage, res.usage);
      done += 1;
      ctx.sink.record(record);
    } catch (err) {
      const e = toPanoptesError(err);
      if (JOB_LEVEL.has(e.code)) {
        // Says nothing about this vignette: every call of the job would meet it. The job fails as a whole.
        fatal ??= e;
        return;
      }
      failures.push(e);
      if (!ctx.signal.aborted && e.code !== 'cancelled') {
        ctx.sink.gaveUp?.({ vignetteIndex: v.index, attempts: tries.n, code: e.code, message: e.message });
      }
    } finally {
      ctx.calls.release();
    }
  };

  try {
    // `for await` takes both sources: the store's pages, and a run's batches posed until decided (which wait for the decision).
    for await (const v of job.vignettes) {
      if (ctx.signal.aborted || fatal) break;
      await ctx.calls.acquire(ctx.signal);
      const p = pose(v).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  } catch (err) {
    if (!ctx.signal.aborted) throw err;
  }
  await Promise.all(inFlight);

  if (ctx.signal.aborted) {
    throw new PanoptesError('cancelled', `job ${job.jobId} was cancelled`, { retryable: false });
  }
  if (fatal) throw fatal;
  if (failures.length > 0) {
    const last = failures.at(-1)!;
    throw new PanoptesError(
      last.code,
      `${failures.length} of ${job.vignetteCount} vignettes failed (given up after at most ${callAttempts} attempts each); last: ${last.message}`,
      { retryable: false },
    );
  }
  return { jobId: job.jobId, attempt: ctx.attempt, workerId: ctx.workerId, vignettesDone: done, usage };
}
