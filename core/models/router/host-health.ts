/**
 * What the router remembers about each host and provider between calls: cooldowns, blacklists,
 * a failure score and the last success. Penalties follow the failure: a rate limit cools the host
 * for its Retry-After; a server error, timeout, dropped connection or empty answer cools it (when
 * its model has another host) for a back-off that doubles with each consecutive failure; a refused key (401) blacklists the provider,
 * a refused model (403) or a host without the model (404) blacklists the host; exhausted quota
 * (402, or a quota body on 400/429) cools the whole provider for a long time. A new cooldown never
 * shortens a longer one. This state lives in this process only and is read directly, never from a
 * copy, so no caller acts on a stale cooldown.
 * Runs on: Node (core).
 */
import type { PanoptesError } from '../../domain.js';
import type { ResolvedHost } from '../catalog.js';
import { ProviderFailure } from '../providers/failures.js';
import { backoffDelay } from '../../concurrency/backoff.js';

export interface CooldownPolicy {
  /** A 429 without Retry-After (default 10 s). */
  rateLimitMs: number;
  /** First server error, timeout, connection error or empty answer (default 1 s); doubles per consecutive failure. */
  errorBaseMs: number;
  /** Longest error back-off (default 60 s). */
  errorMaxMs: number;
  /** Exhausted quota or credit: the provider rests this long, or its Retry-After if longer (default 1 h). */
  quotaMs: number;
  /**
   * Longest rest of a host that refuses connections (default 5 s): it is down, so it is probed
   * again after a back-off (with jitter) that doubles from `errorBaseMs` up to this, so a server
   * restarted after an outage is back in use within seconds.
   */
  downProbeMaxMs: number;
}

export const DEFAULT_COOLDOWNS: CooldownPolicy = {
  rateLimitMs: 10_000,
  errorBaseMs: 1_000,
  errorMaxMs: 60_000,
  quotaMs: 60 * 60_000,
  downProbeMaxMs: 5_000,
};

export interface Penalty {
  /** When it ends (ms since the epoch); Infinity for a blacklist. */
  until: number;
  reason: string;
}

/** What a penalty benches: the one host, or every host of its provider. */
export type PenaltyScope = 'host' | 'provider';

export type HealthState =
  | { state: 'ready' }
  | { state: 'cooling' | 'blacklisted'; until: number; reason: string; scope: PenaltyScope };

interface HostRecord {
  /** Exponentially weighted share of recent attempts that failed (0 healthy .. 1 failing). */
  failureScore: number;
  consecutiveFailures: number;
  lastOkAt: number;
  /** When the host began refusing connections (its first connection failure since it last answered). */
  downSince: number | null;
}

/**
 * How a failure of `code` (and HTTP status) penalises: which scope, and for how long. `alone`: the
 * host is the only one of the call's model. A transient failure (5xx, timeout, dropped connection,
 * empty answer) then benches nothing: with nowhere else to go, a cooldown would only hold back
 * every call of the model, while the caller's own back-off already spaces its retries (LiteLLM
 * skips cooldowns for single-deployment groups for the same reason). What the host itself asks for
 * (Retry-After) and what cannot heal soon (keys, quota, a missing model) still apply.
 */
export function penaltyFor(
  err: PanoptesError,
  consecutiveFailures: number,
  policy: CooldownPolicy,
  alone = false,
): { scope: PenaltyScope; ms: number } | null {
  const status = err instanceof ProviderFailure ? err.status : undefined;
  switch (err.code) {
    case 'rate_limited':
      return { scope: 'host', ms: err.retryAfterMs ?? policy.rateLimitMs };
    case 'connection': {
      // A host that refuses connections rests even when it is the model's only one: every call
      // would otherwise hit it in a hot loop. The router waits for it, within its patience.
      const rest = { baseMs: policy.errorBaseMs, maxMs: policy.downProbeMaxMs, honourLongRetryAfter: true };
      return { scope: 'host', ms: backoffDelay(rest, consecutiveFailures, err.retryAfterMs) };
    }
    case 'server_error':
    case 'timeout':
    case 'empty_output': {
      if (alone) return err.retryAfterMs ? { scope: 'host', ms: err.retryAfterMs } : null;
      const rest = { baseMs: policy.errorBaseMs, maxMs: policy.errorMaxMs, honourLongRetryAfter: true };
      return { scope: 'host', ms: backoffDelay(rest, consecutiveFailures, err.retryAfterMs) };
    }
    case 'auth':
      return { scope: status === 403 ? 'host' : 'provider', ms: Infinity };
    case 'quota':
      return { scope: 'provider', ms: Math.max(policy.quotaMs, err.retryAfterMs ?? 0) };
    case 'bad_request':
      // A host that does not have the model will not grow it; a too-large prompt is not the host's fault.
      return status === 404 ? { scope: 'host', ms: Infinity } : null;
    default:
      return null;
  }
}

export class HostHealth {
  private readonly policy: CooldownPolicy;
  private readonly hostPenalties = new Map<string, Penalty>();
  private readonly providerPenalties = new Map<string, Penalty>();
  private readonly records = new Map<string, HostRecord>();

  /** `random`: the source of jitter for a down host's rest (tests pass a fixed one). */
  constructor(
    policy: Partial<CooldownPolicy> = {},
    private readonly random: () => number = Math.random,
  ) {
    this.policy = { ...DEFAULT_COOLDOWNS, ...policy };
  }

  private record(hostId: string): HostRecord {
    let r = this.records.get(hostId);
    if (!r) {
      r = { failureScore: 0, consecutiveFailures: 0, lastOkAt: 0, downSince: null };
      this.records.set(hostId, r);
    }
    return r;
  }

  succeeded(host: ResolvedHost, now: number): void {
    const r = this.record(host.id);
    r.failureScore *= 0.8;
    r.consecutiveFailures = 0;
    r.lastOkAt = now;
    r.downSince = null;
  }

  /** Since when the host has refused connections, or null when it is not down. */
  downSince(hostId: string): number | null {
    return this.records.get(hostId)?.downSince ?? null;
  }

  /**
   * Records a failed attempt and applies its penalty; returns the penalty applied, if any. `alone`:
   * the host is the only one of the model the call was for (see `penaltyFor`).
   */
  failed(host: ResolvedHost, err: PanoptesError, now: number, alone = false): (Penalty & { scope: PenaltyScope }) | null {
    const r = this.record(host.id);
    r.failureScore = r.failureScore * 0.8 + 0.2;
    r.consecutiveFailures += 1;
    if (err.code === 'connection') r.downSince ??= now;
    const p = penaltyFor(err, r.consecutiveFailures, this.policy, alone);
    if (!p) return null;
    // Full-width jitter (between half and all of the rest): calls that failed together do not
    // come back together.
    if (err.code === 'connection' && p.ms > 0) p.ms = Math.ceil(p.ms * (0.5 + this.random() / 2));
    const reason = `${err.code}: ${err.message}`;
    const map = p.scope === 'host' ? this.hostPenalties : this.providerPenalties;
    const key = p.scope === 'host' ? host.id : host.provider;
    const applied = extend(map, key, now + p.ms, reason);
    return { ...applied, scope: p.scope };
  }

  /** Cools a provider (e.g. over its budget) until `until`, never shortening a longer cooldown. */
  coolProvider(provider: string, until: number, reason: string): void {
    extend(this.providerPenalties, provider, until, reason);
  }

  state(host: ResolvedHost, now: number): HealthState {
    const hp = live(this.hostPenalties, host.id, now);
    const pp = live(this.providerPenalties, host.provider, now);
    // The penalty that ends last is the one that decides.
    const p = hp && pp ? (pp.until > hp.until ? pp : hp) : (hp ?? pp);
    if (!p) return { state: 'ready' };
    return {
      state: p.until === Infinity ? 'blacklisted' : 'cooling',
      until: p.until,
      reason: p.reason,
      scope: p === hp ? 'host' : 'provider',
    };
  }

  failureScore(hostId: string): number {
    return this.records.get(hostId)?.failureScore ?? 0;
  }

  lastOkAt(hostId: string): number {
    return this.records.get(hostId)?.lastOkAt ?? 0;
  }
}

/** Sets a penalty unless a longer one is already in force: a cooldown never shortens. */
function extend(map: Map<string, Penalty>, key: string, until: number, reason: string): Penalty {
  const current = map.get(key);
  if (current && current.until >= until) return current;
  const next = { until, reason };
  map.set(key, next);
  return next;
}

function live(map: Map<string, Penalty>, key: string, now: number): Penalty | undefined {
  const p = map.get(key);
  if (!p) return undefined;
  if (p.until <= now) {
    map.delete(key);
    return undefined;
  }
  return p;
}
