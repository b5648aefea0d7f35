/**
 * The rows of the run tables as SQLite returns them, the column lists the rooms select, and their
 * mapping to the domain's types: shared by the rooms that read runs, jobs, vignettes and records.
 * Runs on: Node (core).
 */
import type { ChatTurn, HostWait, IndexedVignette, Job, JobStatus, Run, RunStatus, StoredResponse, Usage } from '../domain.js';
import { parseStoredRunOptions } from './run-options.js';

export interface RunRow {
  id: string;
  manifest_path: string;
  models: string;
  epochs: number;
  vignette_count: number;
  status: RunStatus;
  job_count: number;
  done_count: number;
  failed_count: number;
  options: string;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  error: string | null;
  owner: string | null;
  lease_until: number | null;
  name: string | null;
  notes: string | null;
  tags: string | null;
  archived_at: number | null;
  restarts: number;
}

export interface JobRow {
  id: number;
  run_id: string;
  model: string;
  epoch: number;
  status: JobStatus;
  attempt: number;
  worker_id: string | null;
  vignettes_done: number;
  input_tokens: number;
  output_tokens: number;
  started_at: number | null;
  finished_at: number | null;
  error: string | null;
  waiting_for_host: string | null;
  vignette_count: number;
}

export interface VignetteFailureRow {
  job_id: number;
  vignette_idx: number;
  vignette_id: string;
  model: string;
  epoch: number;
  attempts: number;
  code: string;
  message: string;
  at: number;
}

/** One model call's answer and usage, as the responses and stage_answers tables both hold them. */
export interface CallColumns {
  response: string;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  latency_ms: number;
  host: string;
  cached: number;
}

/** A call's usage from its columns: the provider's cached and reasoning tokens only where it reported them. */
export function usageOf(row: CallColumns): Usage {
  const usage: Usage = { inputTokens: row.input_tokens, outputTokens: row.output_tokens };
  if (row.cached_tokens !== null) usage.cachedTokens = row.cached_tokens;
  if (row.reasoning_tokens !== null) usage.reasoningTokens = row.reasoning_tokens;
  return usage;
}

export interface ResponseRow extends CallColumns {
  seq: number;
  job_id: number;
  vignette_idx: number;
  finished_at: number;
  finish_reason: string | null;
  run_id: string;
  model: string;
  epoch: number;
  vignette_id: string;
  prompt: string;
  system: string | null;
  messages: string | null;
  target: string | null;
  metadata: string | null;
  options: string;
}

export interface VignetteRow {
  idx: number;
  vignette_id: string;
  prompt: string;
  system: string | null;
  messages: string | null;
  target: string | null;
  metadata: string | null;
}

export function toRun(row: RunRow): Run {
  return {
    id: row.id,
    manifestPath: row.manifest_path,
    models: JSON.parse(row.models) as string[],
    epochs: row.epochs,
    vignetteCount: row.vignette_count,
    status: row.status,
    jobCount: row.job_count,
    doneCount: row.done_count,
    failedCount: row.failed_count,
    options: parseStoredRunOptions(row.options),
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    error: row.error,
    name: row.name,
    notes: row.notes,
    tags: row.tags === null ? [] : (JSON.parse(row.tags) as string[]),
    archivedAt: row.archived_at,
    restarts: row.restarts,
  };
}

export function toJob(row: JobRow): Job {
  const usage: Usage = { inputTokens: row.input_tokens, outputTokens: row.output_tokens };
  return {
    id: row.id,
    runId: row.run_id,
    model: row.model,
    epoch: row.epoch,
    status: row.status,
    attempt: row.attempt,
    workerId: row.worker_id,
    vignettesDone: row.vignettes_done,
    vignetteCount: row.vignette_count,
    usage,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    error: row.error,
    waitingForHost: row.waiting_for_host === null ? null : (JSON.parse(row.waiting_for_host) as HostWait),
  };
}

export function toVignette(row: VignetteRow): IndexedVignette {
  const v: IndexedVignette = { index: row.idx, id: row.vignette_id, prompt: row.prompt };
  if (row.system !== null) v.system = row.system;
  if (row.messages !== null) v.messages = JSON.parse(row.messages) as ChatTurn[];
  if (row.target !== null) v.target = row.target;
  if (row.metadata !== null) v.metadata = JSON.parse(row.metadata) as Record<string, unknown>;
  return v;
}

export function toStoredResponse(row: ResponseRow): StoredResponse {
  const usage = usageOf(row);
  const options = parseStoredRunOptions(row.options);
  const r: StoredResponse = {
    seq: row.seq,
    runId: row.run_id,
    jobId: row.job_id,
    vignetteId: row.vignette_id,
    vignetteIndex: row.vignette_idx,
    model: row.model,
    epoch: row.epoch,
    prompt: row.prompt,
    response: row.response,
    usage,
    latencyMs: row.latency_ms,
    host: row.host,
    cached: row.cached === 1,
    sampling: options.sampling,
    finishedAt: row.finished_at,
  };
  if (row.finish_reason !== null) r.finishReason = row.finish_reason;
  if (row.system !== null) r.system = row.system;
  if (row.messages !== null) r.messages = JSON.parse(row.messages) as ChatTurn[];
  if (row.target !== null) r.target = row.target;
  if (row.metadata !== null) r.metadata = JSON.parse(row.metadata) as Record<string, unknown>;
  return r;
}
