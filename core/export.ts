/**
 * The exported shape of a response: one JSON object per line in responses.jsonl and in exports
 * (the same line everywhere, with the vignette's target and metadata as the manifest gave them),
 * snake_case as in the original coordinator design, and CSV for spreadsheets (metadata and a chat
 * vignette's conversation as JSON). A chat vignette's line carries `messages`, its `prompt` the last user turn.
 * A staged template's record also carries `stages`, every call behind its answer (JSONL only), and an export
 * with scores a `scores` object, a key per scorer.
 * Runs on: Node (core).
 */
import type { ScorerKind, Severity, StageAnswer, StoredResponse, Usage } from './domain.js';

function usageLine(u: Usage): Record<string, number> {
  const usage: Record<string, number> = { input_tokens: u.inputTokens, output_tokens: u.outputTokens };
  if (u.cachedTokens !== undefined) usage.cached_tokens = u.cachedTokens;
  if (u.reasoningTokens !== undefined) usage.reasoning_tokens = u.reasoningTokens;
  return usage;
}

/** A staged record's calls, in the line's own terms (latency rounded, as the database keeps it). */
function stagesLine(stages: readonly StageAnswer[]): object[] {
  return stages.map((s) => ({
    stage: s.stage,
    item: s.item,
    round: s.round,
    response: s.response,
    usage: usageLine(s.usage),
    latency_ms: Math.round(s.latencyMs),
    host: s.host,
    cached: s.cached,
  }));
}

export function toJsonlLine(r: StoredResponse): string {
  return JSON.stringify(jsonlRecord(r));
}

/** A record's JSONL line with its scores, one key per scorer (what `export --scores` writes). */
export function toScoredJsonlLine(r: StoredResponse, scores: Record<string, JsonlScore | null>): string {
  return JSON.stringify({ ...jsonlRecord(r), scores });
}

function jsonlRecord(r: StoredResponse): object {
  const usage = usageLine(r.usage);
  return {
    seq: r.seq,
    run_id: r.runId,
    job_id: r.jobId,
    vignette_id: r.vignetteId,
    model: r.model,
    epoch: r.epoch,
    system: r.system,
    prompt: r.prompt,
    messages: r.messages,
    response: r.response,
    target: r.target,
    metadata: r.metadata,
    usage,
    latency_ms: Math.round(r.latencyMs),
    host: r.host,
    cached: r.cached,
    sampling: r.sampling,
    finished_at: new Date(r.finishedAt).toISOString(),
    finish_reason: r.finishReason,
    ...(r.stages ? { stages: stagesLine(r.stages) } : {}),
  };
}

/** One scorer's verdict on a record in a JSONL export's `scores` (null there while unscored). */
export interface JsonlScore {
  /** The judges' mean value. */
  value: number;
  /** Pass/fail scorers: false when some judge failed it; null for graded scorers. */
  passed: boolean | null;
  kind: ScorerKind;
  /** The worst severity any judge gave. */
  severity: Severity;
}

export const CSV_COLUMNS = [
  'run_id', 'vignette_id', 'model', 'epoch', 'prompt', 'response', 'target',
  'input_tokens', 'output_tokens', 'latency_ms', 'host', 'cached', 'finished_at', 'metadata',
  // Added after the first release: last, so a spreadsheet reading columns by position still reads the rest.
  'messages', 'system', 'est_cost_usd',
] as const;

/**
 * A text cell that a spreadsheet would read as a formula (it starts with =, +, -, @, a tab or a
 * carriage return: a model's answer can be "=HYPERLINK(...)") gets a leading apostrophe, which
 * spreadsheets show as text and do not evaluate (OWASP's CSV-injection advice). Numbers and
 * booleans are written as they are.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

function csvCell(value: string | number | boolean | undefined): string {
  if (value === undefined) return '';
  let s = String(value);
  if (typeof value === 'string' && FORMULA_START.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The header; `extra` names columns after the record's own (a score column per scorer). */
export function csvHeader(extra: readonly string[] = []): string {
  return [...CSV_COLUMNS, ...extra].map(csvCell).join(',');
}

/** One record as a CSV line; `costUsd` is what the call was billed at the run's prices (0 for a cached answer); `extra`, the cells after. */
export function toCsvLine(r: StoredResponse, costUsd?: number, extra: ReadonlyArray<string | number> = []): string {
  return [
    r.runId, r.vignetteId, r.model, r.epoch, r.prompt, r.response, r.target,
    r.usage.inputTokens, r.usage.outputTokens, Math.round(r.latencyMs), r.host, r.cached,
    new Date(r.finishedAt).toISOString(), r.metadata === undefined ? undefined : JSON.stringify(r.metadata),
    r.messages === undefined ? undefined : JSON.stringify(r.messages),
    r.system,
    costUsd,
    ...extra,
  ]
    .map(csvCell)
    .join(',');
}
