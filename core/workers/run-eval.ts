/**
 * runEval: poses each vignette of a job to a ModelClient and hands one ResponseRecord per vignette
 * to the sink as it arrives. Calls run under a shared semaphore (the worker's bound on model calls
 * in flight); a retryable failure is retried with backoff, honouring Retry-After; the job fails
 * when a vignette still has no answer, retryable only if every such failure was.
 * Runs on: Node (core).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  PanoptesError,
  addUsage,
  emptyUsage,
  toPanoptesError,
  type EvalJob,
  type IndexedVignette,
  type JobOutcome,
} from '../domain.js';
import type { ChatMessage, ModelClient, ModelResponse } from '../models/model-client.js';
import { responseRecord } from './response-record.js';
import type { Semaphore } from '../concurrency/semaphore.js';
import type { JobSink } from './worker-handle.js';

export interface RunEvalContext {
  client: ModelClient;
  attempt: number;
  workerId: string;
  sink: JobSink;
  /** Bounds model calls in flight across every job of the worker. */
  calls: Semaphore;
  signal: AbortSignal;
  /** Tries per vignette within one job attempt (default 4). */
  callAttempts?: number;
  /** First backoff in ms; doubles each retry, with jitter (default 100). */
  backoffMs?: number;
  /** Longest single wait, even if a host asks for more (default 30 s). */
  maxBackoffMs?: number;
}

export function messagesOf(v: IndexedVignette): ChatMessage[] {
  return v.system ? [{ role: 'system', content: v.system }, { role: 'user', content: v.prompt }] : [{ role: 'user', content: v.prompt }];
}

export async function runEval(job: EvalJob, ctx: RunEvalContext): Promise<JobOutcome> {
  const usage = emptyUsage();
  let done = 0;
  const failures: PanoptesError[] = [];
  const inFlight = new Set<Promise<void>>();
  const callAttempts = ctx.callAttempts ?? 4;
  const backoffMs = ctx.backoffMs ?? 100;
  const maxBackoffMs = ctx.maxBackoffMs ?? 30_000;

  const call = async (v: IndexedVignette): Promise<ModelResponse> => {
    for (let i = 1; ; i++) {
      try {
        return await ctx.client.generate({
          model: job.model,
          messages: messagesOf(v),
          sampling: job.options.sampling,
          privacy: job.options.privacy,
          noStore: job.options.noStore,
          epoch: job.epoch,
          shareCacheAcrossEpochs: job.options.shareCacheAcrossEpochs,
          signal: ctx.signal,
          runId: job.runId,
          vignette: v.target === undefined ? { id: v.id } : { id: v.id, target: v.target },
        });
      } catch (err) {
        const e = toPanoptesError(err);
        if (!e.retryable || i >= callAttempts || ctx.signal.aborted) throw e;
        const backoff = backoffMs * 2 ** (i - 1) * (0.5 + Math.random());
        const wait = Math.min(maxBackoffMs, Math.max(backoff, e.retryAfterMs ?? 0));
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

  const pose = async (v: IndexedVignette): Promise<void> => {
    try {
      const res = await call(v);
      const record = responseRecord(job, v, {
        response: res.text,
        usage: res.usage,
        latencyMs: res.latencyMs,
        host: res.host,
        cached: res.cached,
        finishedAt: Date.now(),
      });
      addUsage(usage, res.usage);
      done += 1;
      ctx.sink.record(record);
    } catch (err) {
      failures.push(toPanoptesError(err));
    } finally {
      ctx.calls.release();
    }
  };

  try {
    for (const v of job.vignettes) {
      if (ctx.signal.aborted) break;
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
  if (failures.length > 0) {
    const retryable = failures.every((f) => f.retryable);
    const first = failures[0]!;
    throw new PanoptesError(
      first.code,
      `${failures.length} of ${job.vignetteCount} calls to ${job.model} failed; first: ${first.message}`,
      { retryable, ...(first.retryAfterMs === undefined ? {} : { retryAfterMs: first.retryAfterMs }) },
    );
  }
  return { jobId: job.jobId, attempt: ctx.attempt, workerId: ctx.workerId, vignettesDone: done, usage };
}
