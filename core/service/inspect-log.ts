/**
 * A run as inspect_ai's EvalLog (log format version 2, the `.json` form): the pieces of one
 * log, each a plain JSON value shaped as inspect's published schema says
 * (`src/inspect_ai/_view/inspect-openapi.json`; test/export/fixtures holds the version checked).
 * A log is a model's, or in a run of prompt variants a model's under one variant (an arm of the
 * report): inspect compares prompts as evals of one task with different task args, so each arm is
 * its own log with `task_args.variant`, and its metrics are the report's row of that arm.
 * Pure mapping, no I/O: `inspect-export.ts` streams the samples between the head and the tail.
 * Runs on: Node (core).
 */
import type { ChatTurn, Run, RunStatus, StoredResponse, Usage } from '../domain.js';
import type { ModelScore, ScoreReport } from '../scoring/report-shape.js';
import { armName } from '../scoring/variant-arms.js';
import type { RecordScore } from '../store/score-store.js';

/** inspect's ModelUsage. */
export interface InspectUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  input_tokens_cache_read?: number;
  reasoning_tokens?: number;
}

/** One scorer of the run as the export reads it: its name, the version reported, and that report. */
export interface ExportedScorer {
  name: string;
  version: string;
  report: ScoreReport;
}

/** One log of the export: a model, under one prompt variant in a run of variants (null: none), and the vignettes it poses. */
export interface ExportedLog {
  model: string;
  variant: string | null;
  vignettes: number;
}

/** The report row a log's metrics come from: the model's, or its arm's. */
function reportRowName(log: ExportedLog): string {
  return log.variant === null ? log.model : armName(log.model, log.variant);
}

function taskArgs(log: ExportedLog): Record<string, string> {
  return log.variant === null ? {} : { variant: log.variant };
}

/** What every log of the export shares. */
export interface LogContext {
  run: Run;
  evalSetId: string;
  panoptesVersion: string;
}

const STATUS: Record<RunStatus, 'started' | 'success' | 'cancelled' | 'error'> = {
  queued: 'started',
  running: 'started',
  done: 'success',
  failed: 'error',
  cancelled: 'cancelled',
};

/** inspect's StopReason for a provider's own word for why an answer ended (`unknown` where none was said or it is not one of these). */
const STOP_REASON: Record<string, 'stop' | 'max_tokens' | 'model_length' | 'tool_calls' | 'content_filter'> = {
  stop: 'stop',
  end_turn: 'stop',
  stop_sequence: 'stop',
  eos: 'stop',
  length: 'max_tokens',
  max_tokens: 'max_tokens',
  max_output_tokens: 'max_tokens',
  model_length: 'model_length',
  tool_calls: 'tool_calls',
  tool_use: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
  safety: 'content_filter',
  refusal: 'content_filter',
  recitation: 'content_filter',
};

export function stopReason(finishReason: string | undefined): string {
  return (finishReason !== undefined && Object.hasOwn(STOP_REASON, finishReason.toLowerCase()) ? STOP_REASON[finishReason.toLowerCase()] : undefined) ?? 'unknown';
}

function iso(ms: number | null): string {
  return ms === null ? '' : new Date(ms).toISOString();
}

export function toInspectUsage(u: Usage): InspectUsage {
  const out: InspectUsage = { input_tokens: u.inputTokens, output_tokens: u.outputTokens, total_tokens: u.inputTokens + u.outputTokens };
  if (u.cachedTokens !== undefined) out.input_tokens_cache_read = u.cachedTokens;
  if (u.reasoningTokens !== undefined) out.reasoning_tokens = u.reasoningTokens;
  return out;
}

export function addUsage(into: InspectUsage, u: InspectUsage): void {
  into.input_tokens += u.input_tokens;
  into.output_tokens += u.output_tokens;
  into.total_tokens += u.total_tokens;
  if (u.input_tokens_cache_read !== undefined) into.input_tokens_cache_read = (into.input_tokens_cache_read ?? 0) + u.input_tokens_cache_read;
  if (u.reasoning_tokens !== undefined) into.reasoning_tokens = (into.reasoning_tokens ?? 0) + u.reasoning_tokens;
}

/** The conversation posed: a chat vignette's messages, else its system message and prompt. */
function inputMessages(r: StoredResponse): ChatTurn[] {
  if (r.messages !== undefined && r.messages.length > 0) return r.messages;
  const turns: ChatTurn[] = [];
  if (r.system !== undefined && r.system !== '') turns.push({ role: 'system', content: r.system });
  turns.push({ role: 'user', content: r.prompt });
  return turns;
}

/**
 * One record's scores as inspect's `scores` (keyed by scorer name): the reported version's only.
 * Several judges give one verdict each; the sample shows their mean, each judge's in metadata.
 */
function sampleScores(r: StoredResponse, scores: readonly RecordScore[], scorers: readonly ExportedScorer[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of scorers) {
    const own = scores.filter((x) => x.scorerName === s.name && x.version === s.version);
    if (own.length === 0) continue;
    const value = own.reduce((sum, x) => sum + x.value, 0) / own.length;
    const explanation = own.map((x) => (own.length > 1 && x.judge !== null ? `${x.judge}: ${x.explanation}` : x.explanation)).join('\n');
    const metadata: Record<string, unknown> = { severity: own[0]!.severity, passed: own.length === 1 ? own[0]!.passed : null };
    if (own.some((x) => x.judge !== null)) metadata.judges = own.map((x) => ({ judge: x.judge, value: x.value, passed: x.passed }));
    out[s.name] = { value, answer: r.response, explanation, metadata, history: [] };
  }
  return out;
}

/** One record as an EvalSample: id and epoch, the conversation, the answer as the output, the scores. */
export function toSample(r: StoredResponse, scores: readonly RecordScore[], scorers: readonly ExportedScorer[]): Record<string, unknown> {
  const input = inputMessages(r);
  const answer = { role: 'assistant', content: r.response, model: r.model, source: 'generate' };
  const usage = toInspectUsage(r.usage);
  return {
    id: r.vignetteId,
    epoch: r.epoch,
    input,
    target: r.target ?? '',
    messages: [...input, answer],
    output: {
      model: r.model,
      choices: [{ message: answer, stop_reason: stopReason(r.finishReason) }],
      completion: r.response,
      usage,
      time: r.latencyMs / 1000,
      metadata: { host: r.host, cached: r.cached, ...(r.finishReason !== undefined ? { finish_reason: r.finishReason } : {}) },
    },
    scores: sampleScores(r, scores, scorers),
    metadata: r.metadata ?? {},
    store: {},
    events: [],
    model_usage: { [r.model]: usage },
    role_usage: {},
    attachments: {},
    started_at: iso(r.finishedAt - r.latencyMs),
    completed_at: iso(r.finishedAt),
    total_time: r.latencyMs / 1000,
    working_time: r.latencyMs / 1000,
    uuid: `${r.runId}-${r.seq}`,
  };
}

function generateConfig(run: Run): Record<string, unknown> {
  const s = run.options.sampling;
  const out: Record<string, unknown> = {};
  if (s.temperature !== undefined) out.temperature = s.temperature;
  if (s.topP !== undefined) out.top_p = s.topP;
  if (s.maxTokens !== undefined) out.max_tokens = s.maxTokens;
  if (s.seed !== undefined) out.seed = s.seed;
  if (s.stop !== undefined) out.stop_seqs = s.stop;
  if (s.reasoningEffort !== undefined) out.reasoning_effort = s.reasoningEffort;
  if (s.thinkingBudget !== undefined) out.reasoning_tokens = s.thinkingBudget;
  return out;
}

/** The task's name in inspect's listings: the run's name, else its manifest's file name. */
export function taskName(run: Run): string {
  if (run.name !== null && run.name !== '') return run.name;
  const file = run.manifestPath.split(/[\\/]/).pop() ?? 'panoptes';
  return file.replace(/\.jsonl?$/i, '') || 'panoptes';
}

/** Everything of one log but its samples, results and stats: written before the samples. */
export function logHead(ctx: LogContext, log: ExportedLog, scorers: readonly ExportedScorer[]): Record<string, unknown> {
  const { run } = ctx;
  const { model } = log;
  const reducer = scorers[0]?.report.reducer;
  const head: Record<string, unknown> = {
    version: 2,
    status: STATUS[run.status],
    eval: {
      eval_set_id: ctx.evalSetId,
      eval_id: log.variant === null ? `${run.id}-${model}` : `${run.id}-${model}-${log.variant}`,
      run_id: run.id,
      created: iso(run.createdAt),
      task: taskName(run),
      task_id: run.id,
      task_version: 0,
      task_attribs: {},
      task_args: taskArgs(log),
      task_args_passed: taskArgs(log),
      dataset: { name: taskName(run), location: run.manifestPath, samples: log.vignettes, shuffled: false },
      model,
      model_generate_config: generateConfig(run),
      model_args: {},
      config: { epochs: run.epochs, ...(reducer !== undefined ? { epochs_reducer: [reducer] } : {}) },
      packages: { panoptes: ctx.panoptesVersion },
      tags: run.tags,
      metadata: { panoptes_run_id: run.id, ...(log.variant !== null ? { variant: log.variant } : {}), ...(run.notes !== null ? { notes: run.notes } : {}) },
      scorers: scorers.map((s) => ({ name: s.name, options: {}, metrics: [{ name: 'mean' }, { name: 'stderr' }], metadata: { version: s.version, kind: s.report.kind } })),
    },
    plan: { name: 'plan', steps: [{ solver: 'generate', params: {}, params_passed: {} }], config: generateConfig(run) },
    invalidated: false,
    tags: run.tags,
    metadata: {},
  };
  if (run.status === 'failed') head.error = { message: run.error ?? 'the run failed', traceback: '', traceback_ansi: '' };
  return head;
}

/** The folder's `eval-set.json`: the eval set's id and one task per log, as inspect's viewer reads it. */
export function evalSet(ctx: LogContext, logs: readonly ExportedLog[]): Record<string, unknown> {
  const name = taskName(ctx.run);
  return {
    eval_set_id: ctx.evalSetId,
    tasks: logs.map((log, sequence) => ({ task_id: ctx.run.id, name, model: log.model, model_args: {}, task_args: taskArgs(log), sequence })),
  };
}

function metric(name: string, value: number): Record<string, unknown> {
  return { name, value, params: {} };
}

/** One scorer's row of `results.scores` for one log: Panoptes' report's mean and stderr of its model (or arm). */
function evalScore(s: ExportedScorer, row: ModelScore | undefined): Record<string, unknown> {
  const metrics: Record<string, unknown> = {};
  if (row !== undefined && row.n > 0) {
    metrics.mean = metric('mean', row.mean);
    if (row.stderr !== null) metrics.stderr = metric('stderr', row.stderr);
  }
  return {
    name: s.name,
    scorer: s.name,
    reducer: s.report.reducer,
    params: {},
    metrics,
    scored_samples: row?.n ?? 0,
    unscored_samples: row?.not_scored ?? 0,
    metadata: { version: s.version, kind: s.report.kind, ...(s.report.by !== null ? { clustered_by: s.report.by } : {}) },
  };
}

/** `results` and `stats`, written after the samples once their count and usage are known. */
export function logTail(
  ctx: LogContext,
  log: ExportedLog,
  scorers: readonly ExportedScorer[],
  samples: number,
  usage: InspectUsage,
): { results: Record<string, unknown>; stats: Record<string, unknown> } {
  return {
    results: {
      total_samples: log.vignettes * ctx.run.epochs,
      completed_samples: samples,
      scores: scorers.map((s) => evalScore(s, s.report.models.find((m) => m.model === reportRowName(log)))),
    },
    stats: {
      started_at: iso(ctx.run.startedAt),
      completed_at: iso(ctx.run.finishedAt),
      model_usage: { [log.model]: usage },
      role_usage: {},
      connection_limit_history: [],
    },
  };
}
