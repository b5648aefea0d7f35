/**
 * A run's scoring status: each attached scorer version with its records done, pending and failed,
 * and the judges' usage and the retries' apart from the sweep's own.
 * Runs on: Node (core).
 */
import type { RunId } from '../domain.js';
import { reportedKind } from '../scoring/reported-kind.js';
import type { Scorekeeper } from '../scoring/scorekeeper.js';
import type { ScorerAdmission } from '../scoring/scorer-admission.js';
import type { AttemptStore } from '../store/attempt-store.js';
import type { RunScorer, ScoreStore } from '../store/score-store.js';
import type { Store } from '../store/store.js';
import type { ModelCost, ScoringStatus } from './contract.js';

/** What the service scores with: the admission that builds scorers, their stores, and the worker. */
export interface ServiceScoring {
  admission: ScorerAdmission;
  scores: ScoreStore;
  /** The retries of hard fails that scorers asked for. */
  attempts: AttemptStore;
  worker: Scorekeeper;
  /** Judge calls' usage for a run, priced (none until a judge layer reports it). */
  judgeUsage?: (runId: RunId) => ModelCost[];
  /** The candidate's calls that retried hard fails, priced (none without retries). */
  retryUsage?: (runId: RunId) => ModelCost[];
}

/** Records landed that a scorer version has neither scored nor failed to score. */
export function pendingOf(landed: number, s: Pick<RunScorer, 'done' | 'failed'>): number {
  return Math.max(0, landed - s.done - s.failed);
}

export function scoringStatus(store: Store, scoring: ServiceScoring, runId: RunId): ScoringStatus {
  const landed = store.queries.responseCount(runId);
  return {
    runId,
    scorers: scoring.scores.runScorers(runId).map((s) => ({
      name: s.name,
      version: s.version,
      kind: reportedKind(s),
      layer: s.layer,
      judges: s.judges,
      done: s.done,
      pending: pendingOf(landed, s),
      failed: s.failed,
      stopped: s.stopped,
      lastError: s.failed > 0 ? s.lastError : null,
    })),
    judgeUsage: scoring.judgeUsage?.(runId) ?? [],
    retryUsage: scoring.retryUsage?.(runId) ?? [],
  };
}
