/**
 * The router's metrics report: recent calls and, per host, provider and profile, the count, error
 * counts by status, latency percentiles, tokens, cost and cache hits, read from the router's
 * tables.
 * Runs on: Node (core).
 */
import type { CallAggregateRow, RouterStore } from '../../store/router-store.js';
import type { CallAggregate, MetricsQuery, MetricsReport } from './router-report.js';

/** The report of the calls `query` names at or after `since` (the caller has flushed buffered rows). */
export function metricsReport(store: RouterStore, query: MetricsQuery, since: number): Omit<MetricsReport, 'budgets'> {
  const filter = { since, model: query.model, provider: query.provider, profile: query.profile };
  const errors = new Map<string, Record<string, number>>();
  const providerErrors = new Map<string, Record<string, number>>();
  const profileErrors = new Map<string, Record<string, number>>();
  const count = (map: Map<string, Record<string, number>>, key: string, status: string, n: number) => {
    const byStatus = map.get(key) ?? {};
    byStatus[status] = (byStatus[status] ?? 0) + n;
    map.set(key, byStatus);
  };
  for (const e of store.errorCounts(filter)) {
    count(errors, e.host, e.status, e.n);
    count(providerErrors, e.provider, e.status, e.n);
    count(profileErrors, e.profile, e.status, e.n);
  }
  const totals = (r: Omit<CallAggregateRow, 'provider' | 'host'>, errs: Record<string, number> | undefined) => ({
    calls: r.calls,
    errors: errs ?? {},
    p50LatencyMs: r.p50LatencyMs,
    p95LatencyMs: r.p95LatencyMs,
    inputTokens: r.inputTokens,
    outputTokens: r.outputTokens,
    costUsd: r.costUsd,
    cacheHits: r.cacheHits,
  });
  const toAggregate = (r: CallAggregateRow, errs: Record<string, number> | undefined): CallAggregate => ({
    provider: r.provider,
    ...(r.host === null ? {} : { host: r.host }),
    ...totals(r, errs),
  });
  return {
    since,
    profile: query.profile ?? null,
    recent: store.recentCalls(filter, query.limit ?? 100).map((c) => ({
      at: c.at,
      provider: c.provider,
      host: c.host,
      model: c.model,
      status: c.status,
      latencyMs: c.latencyMs,
      inputTokens: c.inputTokens,
      outputTokens: c.outputTokens,
      costUsd: c.costUsd,
      cacheHit: c.cacheHit,
      profile: c.profile,
    })),
    hosts: store.aggregateByHost(filter).map((r) => toAggregate(r, errors.get(r.host!))),
    providers: store.aggregateByProvider(filter).map((r) => toAggregate(r, providerErrors.get(r.provider))),
    profiles: store.aggregateByProfile(filter).map((r) => ({ profile: r.profile, ...totals(r, profileErrors.get(r.profile)) })),
  };
}
