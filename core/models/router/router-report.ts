/**
 * What the router reports about itself: per-call metrics with per-provider/host aggregates, and
 * its posture (which logical models have a privacy-safe host routable right now). The contract
 * re-exports these types, so every transport serves them as they are.
 * Runs on: Node (core); types shared with the renderer.
 */
import type { PrivacyMode } from '../../domain.js';

/** Which calls a metrics report covers. */
export interface MetricsQuery {
  /** Calls at or after this time (ms since the epoch; default: the last 24 hours). */
  since?: number | undefined;
  model?: string | undefined;
  provider?: string | undefined;
  /** Recent calls listed (default 100); aggregates cover every matching call. */
  limit?: number | undefined;
}

/** One model call as the router saw it (a cache hit is a call that cost nothing). */
export interface CallMetric {
  at: number;
  provider: string;
  /** `provider/provider-model-id`. */
  host: string;
  /** The logical model asked for. */
  model: string;
  /** `ok`, or the error code the call failed with. */
  status: string;
  latencyMs: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  cacheHit: boolean;
  profile: string;
}

/** Calls to one host (or, in `providers`, one provider) in the window. */
export interface CallAggregate {
  provider: string;
  /** The host; absent in the per-provider totals. */
  host?: string;
  calls: number;
  /** Failed calls by error code. */
  errors: Record<string, number>;
  p50LatencyMs: number;
  p95LatencyMs: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  cacheHits: number;
}

export interface MetricsReport {
  since: number;
  /** Newest first, at most `limit`. */
  recent: CallMetric[];
  hosts: CallAggregate[];
  providers: CallAggregate[];
}

/** Why a host can or cannot take a call right now. */
export type HostState = 'ready' | 'cooling' | 'blacklisted' | 'over_budget' | 'no_key';

export interface HostPosture {
  id: string;
  provider: string;
  privacySafe: boolean;
  state: HostState;
  /** When a cooling, blacklisted or over-budget host returns (ms since the epoch); null when ready or never. */
  until: number | null;
  /** The failure or limit that put it there. */
  reason: string | null;
}

export interface ModelPosture {
  model: string;
  /** Some host can take a call now under any privacy mode. */
  routable: boolean;
  /** Some privacy-safe host can take a call now (what strict mode needs). */
  privacySafeRoutable: boolean;
  hosts: HostPosture[];
}

export interface PostureReport {
  at: number;
  /** `strict` when the instance is locked to strict privacy (PANOPTES_PRIVACY_LOCK), else null. */
  privacyLock: PrivacyMode | null;
  models: ModelPosture[];
}
