/**
 * What the router reports about itself: per-call metrics with per-provider/host/profile
 * aggregates; its posture (which logical models have a privacy-safe host routable right now, and
 * whether two frontier ones do: `frontierOk`); the roster (every logical model with its hosts,
 * their health, prices and windows, and the last probe of each); and probe outcomes. The contract
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
  /** Only calls made under this profile (the calls' keys and budgets). */
  profile?: string | undefined;
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

/** Calls made under one profile in the window, across its providers. */
export interface ProfileAggregate extends Omit<CallAggregate, 'provider' | 'host'> {
  profile: string;
}

export interface MetricsReport {
  since: number;
  /** The profile the report is limited to, or null for every profile. */
  profile: string | null;
  /** Newest first, at most `limit`. */
  recent: CallMetric[];
  hosts: CallAggregate[];
  providers: CallAggregate[];
  /** Totals per profile (one entry when the report is limited to a profile). */
  profiles: ProfileAggregate[];
  /** Each (profile, provider) with a daily budget: its limits and the rolling window's spend now. */
  budgets: BudgetWindow[];
}

/** A daily budget and what its rolling window holds now (settled spend plus calls in flight). */
export interface BudgetWindow {
  profile: string;
  provider: string;
  /** The window's length (24 h). */
  windowMs: number;
  /** The limits set (each optional). */
  limit: { calls?: number | undefined; tokens?: number | undefined; usd?: number | undefined };
  used: { calls: number; tokens: number; usd: number };
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
  /** The catalog judges it a frontier model (`frontier: true`). */
  frontier: boolean;
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
  /**
   * At least two frontier logical models have a privacy-safe host that can take a call now. False
   * is the honest answer when they do not, whatever unsafe or non-frontier hosts could answer.
   */
  frontierOk: boolean;
  /** The frontier models that have a privacy-safe host routable now. */
  frontierReady: string[];
  models: ModelPosture[];
}

/** How a host answered its last probe (one short call, at most 16 output tokens). */
export interface ProbeOutcome {
  at: number;
  /** `ok`, `no_key` (not called: its key is not set), or the error code the call failed with. */
  status: string;
  latencyMs: number;
  /** What went wrong, scrubbed of keys; null when it answered. */
  message: string | null;
}

export interface ProbeResult extends ProbeOutcome {
  model: string;
  host: string;
  provider: string;
  /** The host's state after the probe (a failure marks it, as any failed call would). */
  state: HostState;
}

export interface ProbeReport {
  at: number;
  results: ProbeResult[];
  /** Hosts that answered / that did not. */
  ok: number;
  failed: number;
}

export interface RosterHost extends HostPosture {
  kind: string;
  model: string;
  contextWindow: number;
  /** The host's own prices; null where the catalog gives none (estimates then use the flat fallback). */
  inputPerMTok: number | null;
  outputPerMTok: number | null;
  /** The last probe in this process, or null if never probed. */
  lastProbe: ProbeOutcome | null;
}

/** A logical model as the roster shows it: the catalog's facts joined with live host health. */
export interface RosterModel extends ModelPosture {
  label: string;
  /** When the frontier judgement was made, or null for a model not judged frontier. */
  frontierAsOf: string | null;
  /** The smallest context window of its hosts: what every host can hold. */
  contextWindow: number;
  /** The price estimates use: the first host's, else the flat fallback. */
  inputPerMTok: number;
  outputPerMTok: number;
  /** Some host neither trains on nor logs prompts. */
  privacySafe: boolean;
  hosts: RosterHost[];
}

export interface RosterReport extends Omit<PostureReport, 'models'> {
  models: RosterModel[];
}
