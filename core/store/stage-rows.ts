/**
 * A staged record's calls as SQLite returns them (`stage_answers`, with the record's seq), and
 * their mapping to the domain's StageAnswer: how a page of records gets its stages back, and how a
 * resumed job gets back the calls its vignettes finished before their records landed (`finished_stages`).
 * Runs on: Node (core).
 */
import type { StageAnswer } from '../domain.js';
import { type CallColumns, usageOf } from './run-rows.js';

export interface StageRow extends CallColumns {
  seq: number;
  stage: string;
  item: number | null;
  round: number;
}

/** A page's stage rows (by seq, then call order), for records with seqs in (after, upTo]. */
export const STAGES_OF_PAGE = `SELECT r.seq, s.stage, s.item, s.round, s.response, s.input_tokens, s.output_tokens, s.cached_tokens,
    s.reasoning_tokens, s.latency_ms, s.host, s.cached
  FROM jobs j JOIN stage_answers s ON s.job_id = j.id JOIN responses r ON r.job_id = s.job_id AND r.vignette_idx = s.vignette_idx
  WHERE j.run_id = ? AND r.seq > ? AND r.seq <= ? ORDER BY r.seq, s.call_idx`;

export function toStageAnswer(row: Omit<StageRow, 'seq'>): StageAnswer {
  return { stage: row.stage, item: row.item, round: row.round, response: row.response, usage: usageOf(row), latencyMs: row.latency_ms, host: row.host, cached: row.cached === 1 };
}

/** The finished calls of a job's vignettes with indexes in (after, upTo], by vignette, then call order. */
export const FINISHED_STAGES_OF_PAGE = `SELECT vignette_idx, stage, item, round, response, input_tokens, output_tokens, cached_tokens,
    reasoning_tokens, latency_ms, host, cached
  FROM finished_stages WHERE job_id = ? AND vignette_idx > ? AND vignette_idx <= ? ORDER BY vignette_idx, call_idx`;

export type FinishedStageRow = Omit<StageRow, 'seq'> & { vignette_idx: number };

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
