/**
 * The exported shape of a score: one JSON object per line of `panoptes export --scores`, one line
 * per (record, scorer version, attempt, judge), snake_case like the responses export. `attempt` is
 * 1 for the sweep's own record, 2 and on for a retry on a hard fail.
 * Runs on: Node (core).
 */
import type { ScoreLine } from '../store/score-store.js';

export function toScoreJsonlLine(s: ScoreLine): string {
  return JSON.stringify({
    vignette_id: s.vignetteId,
    model: s.model,
    epoch: s.epoch,
    attempt: s.attempt,
    scorer: s.scorerName,
    version: s.version,
    value: s.value,
    passed: s.passed,
    explanation: s.explanation,
    judge: s.judges.length > 0 ? (s.judges[s.judge] ?? null) : null,
  });
}
