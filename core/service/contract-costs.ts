/**
 * The contract's costs: what a model's calls cost at the run's kept prices, a response with its
 * own cost, and the totals over a run or every run. Re-exported by the contract (contract.ts).
 * Runs on: Node (core); types shared with the renderer.
 */
import type { ModelUsage, StoredResponse } from '../domain.js';

export interface ModelCost extends ModelUsage {
  /** What the billed tokens cost at the catalog's prices. */
  estCostUsd: number;
  /** What the cached answers' tokens would have cost: the prompt cache's saving. */
  savedCostUsd: number;
}

/**
 * A stored response with what its call cost at the run's kept prices. A call the prompt cache
 * answered cost nothing; `savedCostUsd` is what its tokens would have cost (the cache's saving).
 * Over a run, these sum to its `estCostUsd` and `savedCostUsd`.
 */
export interface PricedResponse extends StoredResponse {
  estCostUsd: number;
  savedCostUsd: number;
}

/** What a run's scoring cost on top of its sweep, in a runs list's line (the run's `stats` has them per model). */
export interface RunScoringCosts {
  /** The LLM judges' calls, at each judge's catalog price. */
  judgeCostUsd: number;
  /** The candidate models' calls that retried hard fails, at the run's kept prices. */
  retryCostUsd: number;
  /** Everything billed: the sweep's `estCostUsd` plus the judges' and the retries'. */
  totalWithScoringUsd: number;
}

/** The sweep's calls to one model a provider bills, as counted before each left, against the records that landed. */
export interface SweepCallCount {
  model: string;
  /** Calls asked (prompt-cache answers included), counted before each request left. */
  asked: number;
  /** Of those, calls no record holds: cut off by a kill -9 before their records landed, or in flight now. */
  unrecorded: number;
}

export interface StatsReport {
  /** The sweep's own calls; the totals below are theirs. */
  models: ModelCost[];
  /** The candidate models' extra calls that retried hard fails (a scorer's retryOnHardFail), apart from the sweep's. */
  retries: ModelCost[];
  /** The LLM judges' calls, per judge model at the catalog's prices, apart from the sweep's. */
  judges: ModelCost[];
  /** What the judges' calls cost, and the retries' (both also in `totalWithScoringUsd`). */
  totalJudgeCostUsd: number;
  totalRetryCostUsd: number;
  /** Everything billed: the sweep's cost (`totalEstCostUsd`) plus the judges' and the retries'. */
  totalWithScoringUsd: number;
  totalEstCostUsd: number;
  totalInputTokens: number;
  totalOutputTokens: number;
  totalCalls: number;
  totalCachedCalls: number;
  totalCachedInputTokens: number;
  totalCachedOutputTokens: number;
  totalSavedCostUsd: number;
  /**
   * The sweep's calls to providers that bill, per model, counted before each request left (local
   * models, the mocks and GGUF files, bill nobody and are not counted), so the calls a kill -9 cut
   * off before their records landed are still in the account.
   */
  sweepCalls: SweepCallCount[];
  totalSweepCallsAsked: number;
  totalSweepCallsUnrecorded: number;
}
