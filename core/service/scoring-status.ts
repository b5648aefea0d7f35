/**
 * A run's scoring status: each attached scorer version with its records done, pending and failed,
 * and the judges' usage and the retries' apart from the sweep's own.
 * Runs on: Node (core).
 */
import type { RunId } from '../domain.js';
import type { ScoreWorker } from '../scoring/score-worker.js';
import type { ScorerRegistry } from '../scoring/scorer-registry.js';
import type { AttemptStore } from '../store/attempt-store.js';
import type { ScoreStore } from '../store/score-store.js';
import type { Store } from '../store/store.js';
import type { ModelCost, ScoringStatus } from './contract.js';

/** What the service scores with: the registry that builds scorers, their stores, and the worker. */
export interface ServiceScoring {
  registry: ScorerRegistry;
  scores: ScoreStore;
  /** The retries of hard fails that scorers asked for. */
  attempts: AttemptStore;
  worker: ScoreWorker;
  /** Judge calls' usage for a run, priced (none until a judge layer reports it). */
  judgeUsage?: (runId: RunId) => ModelCost[];
  /** The candidate's calls that retried hard fails, priced (none without retries). */
  retryUsage?: (runId: RunId) => ModelCost[];
}

export function scoringStatus(store: Store, scoring: ServiceScoring, runId: RunId): ScoringStatus {
  const landed = store.queries.responseCount(runId);
  return {
    runId,
    scorers: scoring.scores.runScorers(runId).map((s) => ({
      name: s.name,
      version: s.version,
      kind: s.kind,
      layer: s.layer,
      judges: s.judges,
      done: s.done,
      pending: Math.max(0, landed - s.done - s.failed),
      failed: s.failed,
      stopped: s.stopped,
      lastError: s.failed > 0 ? s.lastError : null,
    })),
    judgeUsage: scoring.judgeUsage?.(runId) ?? [],
    retryUsage: scoring.retryUsage?.(runId) ?? [],
  };
}
