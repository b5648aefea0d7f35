/**
 * HostPicker: picks the best eligible host of a logical model for one host try (one call passed to one host).
 * Eligible = not blacklisted, not cooling down, not excluded (already tried by this call), allowed
 * by the privacy mode, a context window that holds the prompt plus the most it may write (a GGUF
 * host fits its output to the window: the prompt alone must fit, see `windowNeedOf`), a key
 * present, and room in the provider's budget. Ranked by least-recently-tried provider (so load
 * rotates and a flaky provider drifts to the back), then health (fewest recent failures), then
 * freshness (most recent success), then catalog order. In fallback privacy an unsafe host is
 * picked only when no safe host is eligible and none returns within the brief wait; when the only
 * hosts left are cooling down briefly, the pick says to wait for the soonest instead of failing.
 * Runs on: Node (core).
 */
import type { PrivacyMode, Usage } from '../../domain.js';
import { windowNeedOf, type Catalog, type ResolvedHost } from '../catalog.js';
import type { HostState } from './router-report.js';
import type { HostHealth } from './host-health.js';
import { privacyTiers } from './privacy.js';

export interface PickRequest {
  /** The profile whose keys and budgets the call runs under. */
  profile: string;
  privacy: PrivacyMode;
  /** The prompt's tokens (an upper bound or an estimate with margin). */
  promptTokens: number;
  /** The most the call may write (0: the host's own cap). */
  maxOutput: number;
  /** Expected usage, for budget checks. */
  estimate: Usage;
}

/** Why a host was not picked. */
export interface HostVerdict {
  host: ResolvedHost;
  state: Exclude<HostState, 'ready'> | 'excluded' | 'privacy' | 'context';
  /** When it may be picked again; null for never (or not by waiting). */
  until: number | null;
  reason: string;
  /** For `context`: the tokens of its window the call needs from this host. */
  needTokens?: number;
}

/** A provider-wide condition outside health: no key, no budget room. */
export type ProviderGate = (
  host: ResolvedHost,
  request: PickRequest | undefined,
) => { state: 'no_key' | 'over_budget'; until: number | null; reason: string } | undefined;

export type Pick =
  | { kind: 'host'; host: ResolvedHost }
  | { kind: 'wait'; until: number; host: ResolvedHost }
  | { kind: 'none'; verdicts: HostVerdict[]; soonest: number | null };

export interface HostPickerOptions {
  catalog: Catalog;
  health: HostHealth;
  gate: ProviderGate;
  now: () => number;
  /** A pick waits for a host cooling down at most this long (ms) rather than failing. */
  briefWaitMs: number;
}

export class HostPicker {
  /** Per provider: the sequence number of its latest host try (0: never), for rotation. */
  private readonly lastTry = new Map<string, number>();
  private tries = 0;

  constructor(private readonly opts: HostPickerOptions) {}

  /** The host's verdict now, or undefined when it is eligible for this request. */
  verdict(host: ResolvedHost, request: PickRequest | undefined, exclude: ReadonlySet<string>, now: number): HostVerdict | undefined {
    if (exclude.has(host.id)) return { host, state: 'excluded', until: null, reason: 'already tried by this call' };
    if (request && request.privacy === 'strict' && !host.privacySafe) {
      return { host, state: 'privacy', until: null, reason: 'may train on or log prompts' };
    }
    const needTokens = request ? windowNeedOf(host, request.promptTokens, request.maxOutput) : 0;
    if (needTokens > host.contextWindow) {
      return { host, state: 'context', until: null, reason: `context window ${host.contextWindow} < ~${needTokens} tokens needed`, needTokens };
    }
    const gated = this.opts.gate(host, request);
    if (gated) return { host, ...gated };
    const health = this.opts.health.state(host, now);
    if (health.state !== 'ready') {
      return {
        host,
        state: health.state,
        until: health.state === 'blacklisted' ? null : health.until,
        reason: `${health.scope === 'provider' ? `provider ${host.provider}: ` : ''}${health.reason}`,
      };
    }
    return undefined;
  }

  /** The best eligible host of `logicalModel` for `request`, skipping `exclude` (host ids). */
  pick(logicalModel: string, request: PickRequest, exclude: ReadonlySet<string>): Pick {
    const now = this.opts.now();
    const hosts = this.opts.catalog.hosts(logicalModel);
    const verdicts: HostVerdict[] = [];
    let soonest: number | null = null;
    for (const tier of privacyTiers(hosts, request.privacy)) {
      const eligible: ResolvedHost[] = [];
      let waitFor: { until: number; host: ResolvedHost } | undefined;
      for (const host of tier) {
        const v = this.verdict(host, request, exclude, now);
        if (!v) {
          eligible.push(host);
          continue;
        }
        verdicts.push(v);
        if (v.until !== null && v.until > now) {
          if (soonest === null || v.until < soonest) soonest = v.until;
          if (v.until - now <= this.opts.briefWaitMs && (!waitFor || v.until < waitFor.until)) waitFor = { until: v.until, host };
        }
      }
      if (eligible.length > 0) {
        const host = this.best(eligible);
        this.tries += 1;
        this.lastTry.set(host.provider, this.tries);
        return { kind: 'host', host };
      }
      // A safe host back shortly beats an unsafe host now.
      if (waitFor) return { kind: 'wait', ...waitFor };
    }
    // Hosts the mode never allows are part of the answer too, so the error can say why.
    if (request.privacy === 'strict') {
      for (const host of hosts) if (!host.privacySafe) verdicts.push(this.verdict(host, request, exclude, now)!);
    }
    return { kind: 'none', verdicts, soonest };
  }

  private best(eligible: ResolvedHost[]): ResolvedHost {
    if (eligible.length === 1) return eligible[0]!;
    const health = this.opts.health;
    let best = eligible[0]!;
    for (let i = 1; i < eligible.length; i++) {
      const h = eligible[i]!;
      const order =
        (this.lastTry.get(h.provider) ?? 0) - (this.lastTry.get(best.provider) ?? 0) ||
        health.failureScore(h.id) - health.failureScore(best.id) ||
        health.lastOkAt(best.id) - health.lastOkAt(h.id);
      if (order < 0) best = h;
    }
    return best;
  }
}
