/**
 * The metric rows the router writes: one per host try (its status, latency, tokens and
 * cost) and one per call answered from the prompt cache (no latency, no cost, the host that first
 * gave the answer).
 * Runs on: Node (core).
 */
import type { Usage } from '../../domain.js';
import type { CallRow } from '../../store/router-store.js';
import type { ResolvedHost } from '../catalog.js';

/** The row of one host try on `host`; a failed try has no usage and costs nothing. */
export function hostTryRow(
  at: number,
  host: ResolvedHost,
  model: string,
  profile: string,
  status: string,
  latencyMs: number,
  usage?: Usage,
  costUsd = 0,
): CallRow {
  return {
    at,
    profile,
    provider: host.provider,
    host: host.id,
    model,
    status,
    latencyMs,
    inputTokens: usage?.inputTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    cachedTokens: usage?.cachedTokens ?? null,
    reasoningTokens: usage?.reasoningTokens ?? null,
    costUsd,
    cacheHit: false,
  };
}

/** The row of a call answered from the cache by the answer `host` (`provider/...`) once gave. */
export function cacheHitRow(at: number, model: string, profile: string, hit: { usage: Usage; host: string }): CallRow {
  return {
    at,
    profile,
    provider: hit.host.slice(0, hit.host.indexOf('/')),
    host: hit.host,
    model,
    status: 'ok',
    latencyMs: 0,
    inputTokens: hit.usage.inputTokens,
    outputTokens: hit.usage.outputTokens,
    cachedTokens: hit.usage.cachedTokens ?? null,
    reasoningTokens: hit.usage.reasoningTokens ?? null,
    costUsd: 0,
    cacheHit: true,
  };
}
