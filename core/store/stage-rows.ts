/**
 * A staged record's calls as SQLite returns them (`stage_answers`, with the record's seq), and
 * their mapping to the domain's StageAnswer: how a page of records gets its stages back.
 * Runs on: Node (core).
 */
import type { StageAnswer, Usage } from '../domain.js';

export interface StageRow {
  seq: number;
  stage: string;
  item: number | null;
  round: number;
  response: string;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  latency_ms: number;
  host: string;
  cached: number;
}

/** A page's stage rows (by seq, then call order), for records with seqs in (after, upTo]. */
export const STAGES_OF_PAGE = `SELECT r.seq, s.stage, s.item, s.round, s.response, s.input_tokens, s.output_tokens, s.cached_tokens,
    s.reasoning_tokens, s.latency_ms, s.host, s.cached
  FROM jobs j JOIN stage_answers s ON s.job_id = j.id JOIN responses r ON r.job_id = s.job_id AND r.vignette_idx = s.vignette_idx
  WHERE j.run_id = ? AND r.seq > ? AND r.seq <= ? ORDER BY r.seq, s.call_idx`;

export function toStageAnswer(row: StageRow): StageAnswer {
  const usage: Usage = { inputTokens: row.input_tokens, outputTokens: row.output_tokens };
  if (row.cached_tokens !== null) usage.cachedTokens = row.cached_tokens;
  if (row.reasoning_tokens !== null) usage.reasoningTokens = row.reasoning_tokens;
  return { stage: row.stage, item: row.item, round: row.round, response: row.response, usage, latencyMs: row.latency_ms, host: row.host, cached: row.cached === 1 };
}

/** The stages of each record of a page, by seq. */
export function stagesBySeq(rows: readonly StageRow[]): Map<number, StageAnswer[]> {
  const out = new Map<number, StageAnswer[]>();
  for (const row of rows) {
    let list = out.get(row.seq);
    if (!list) out.set(row.seq, (list = []));
    list.push(toStageAnswer(row));
  }
  return out;
}
