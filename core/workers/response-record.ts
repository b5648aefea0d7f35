/**
 * A ResponseRecord from a job, one of its vignettes and a model's answer: the one place that knows
 * which fields come from where, for in-process answers and for answers a remote worker sent back.
 * Runs on: Node (core).
 */
import type { EvalJob, IndexedVignette, ResponseRecord, Usage } from '../domain.js';

export interface CallResult {
  response: string;
  usage: Usage;
  latencyMs: number;
  host: string;
  cached: boolean;
  finishedAt: number;
  finishReason?: string | undefined;
}

export function responseRecord(job: EvalJob, v: IndexedVignette, a: CallResult): ResponseRecord {
  const record: ResponseRecord = {
    runId: job.runId,
    jobId: job.jobId,
    vignetteId: v.id,
    vignetteIndex: v.index,
    model: job.model,
    epoch: job.epoch,
    prompt: v.prompt,
    response: a.response,
    usage: a.usage,
    latencyMs: a.latencyMs,
    host: a.host,
    cached: a.cached,
    sampling: job.options.sampling,
    finishedAt: a.finishedAt,
  };
  if (a.finishReason !== undefined) record.finishReason = a.finishReason;
  if (v.system !== undefined) record.system = v.system;
  if (v.messages !== undefined) record.messages = v.messages;
  if (v.target !== undefined) record.target = v.target;
  if (v.metadata !== undefined) record.metadata = v.metadata;
  return record;
}
