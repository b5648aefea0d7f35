/**
 * The model router's room of the store: the prompt cache, per-call metrics and the rolling budget
 * windows, on the store's connection (`store.router`), or on an in-memory connection of the
 * router's own when it has no store. The router batches its writes and hands them over in one
 * IMMEDIATE transaction, so the per-call path never waits on a commit; every aggregate is SQL.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import type { Connection } from './connection.js';

/** One model call as stored (a host try or a cache hit). */
export interface CallRow {
  at: number;
  profile: string;
  provider: string;
  host: string;
  model: string;
  status: string;
  latencyMs: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number | null;
  reasoningTokens: number | null;
  costUsd: number;
  cacheHit: boolean;
}

export interface CacheRow {
  key: string;
  value: string;
  createdAt: number;
  expiresAt: number;
}

/** Spend added to one minute of one (profile, provider) window. */
export interface BudgetRow {
  profile: string;
  provider: string;
  minute: number;
  calls: number;
  tokens: number;
  usd: number;
}

export interface RouterWrites {
  calls: readonly CallRow[];
  cache: readonly CacheRow[];
  budget: readonly BudgetRow[];
}

export interface CallFilter {
  since: number;
  model?: string | undefined;
  provider?: string | undefined;
  profile?: string | undefined;
}

/** Totals for one group (a host, or a provider when `host` is null). */
export interface CallAggregateRow {
  provider: string;
  host: string | null;
  calls: number;
  p50LatencyMs: number;
  p95LatencyMs: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  cacheHits: number;
}

/** Totals for the calls made under one profile. */
export interface ProfileAggregateRow extends Omit<CallAggregateRow, 'provider' | 'host'> {
  profile: string;
}

export interface ErrorCountRow {
  profile: string;
  provider: string;
  host: string;
  status: string;
  n: number;
}

interface CallDbRow {
  at: number;
  profile: string;
  provider: string;
  host: string;
  model: string;
  status: string;
  latency_ms: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  cost_usd: number;
  cache_hit: number;
}

// Filters bind the same parameter twice: `(@model IS NULL OR model = @model)`.
const CALL_FILTER = `at >= @since AND (@model IS NULL OR model = @model) AND (@provider IS NULL OR provider = @provider)
  AND (@profile IS NULL OR profile = @profile)`;

/**
 * Aggregates per group in one pass. Percentiles by nearest rank over provider calls only (cache
 * hits answer in microseconds and would hide a slow host): rank = ceil(n * p / 100).
 */
function aggregateSql(groupBy: 'provider' | 'provider, host' | 'profile'): string {
  const perHost = groupBy === 'provider, host';
  const key = groupBy === 'profile' ? 'profile' : 'provider';
  return `
    WITH c AS (SELECT * FROM router_calls WHERE ${CALL_FILTER}),
    ranked AS (
      SELECT ${groupBy}, latency_ms,
             ROW_NUMBER() OVER (PARTITION BY ${groupBy} ORDER BY latency_ms) AS rn,
             COUNT(*) OVER (PARTITION BY ${groupBy}) AS n
      FROM c WHERE cache_hit = 0
    ),
    pct AS (
      SELECT ${groupBy},
             MAX(CASE WHEN rn = (n * 50 + 99) / 100 THEN latency_ms END) AS p50,
             MAX(CASE WHEN rn = (n * 95 + 99) / 100 THEN latency_ms END) AS p95
      FROM ranked GROUP BY ${groupBy}
    ),
    totals AS (
      SELECT ${groupBy},
             SUM(cache_hit = 0) AS calls,
             SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens,
             SUM(cost_usd) AS cost_usd, SUM(cache_hit) AS cache_hits
      FROM c GROUP BY ${groupBy}
    )
    SELECT t.${key} AS ${key}, ${groupBy === 'profile' ? '' : `${perHost ? 't.host' : 'NULL'} AS host, `}t.calls AS calls,
           COALESCE(p.p50, 0) AS p50LatencyMs, COALESCE(p.p95, 0) AS p95LatencyMs,
           t.input_tokens AS inputTokens, t.output_tokens AS outputTokens,
           t.cost_usd AS costUsd, t.cache_hits AS cacheHits
    FROM totals t LEFT JOIN pct p ON p.${key} = t.${key} ${perHost ? 'AND p.host = t.host' : ''}
    ORDER BY t.${key}${perHost ? ', t.host' : ''}`;
}

export class RouterStore {
  private readonly db: Database.Database;
  private readonly stmt: ReturnType<RouterStore['prepare']>;
  private readonly writeTx: Database.Transaction<(w: RouterWrites) => void>;

  constructor(private readonly connection: Connection) {
    this.db = connection.db;
    this.stmt = this.prepare();
    this.writeTx = this.db.transaction((w: RouterWrites) => {
      for (const c of w.calls) {
        this.stmt.insertCall.run(
          c.at, c.profile, c.provider, c.host, c.model, c.status, Math.round(c.latencyMs), c.inputTokens,
          c.outputTokens, c.cachedTokens, c.reasoningTokens, c.costUsd, c.cacheHit ? 1 : 0,
        );
      }
      for (const r of w.cache) this.stmt.putCache.run(r.key, r.value, r.createdAt, r.expiresAt);
      for (const b of w.budget) this.stmt.addBudget.run(b.profile, b.provider, b.minute, b.calls, b.tokens, b.usd);
    });
  }

  private prepare() {
    const db = this.db;
    return {
      insertCall: db.prepare(
        `INSERT INTO router_calls (at, profile, provider, host, model, status, latency_ms, input_tokens, output_tokens,
           cached_tokens, reasoning_tokens, cost_usd, cache_hit) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      putCache: db.prepare(
        `INSERT INTO prompt_cache (key, value, created_at, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, created_at = excluded.created_at, expires_at = excluded.expires_at`,
      ),
      getCache: db.prepare<[string, number], { value: string; expires_at: number }>(
        `SELECT value, expires_at FROM prompt_cache WHERE key = ? AND expires_at > ?`,
      ),
      addBudget: db.prepare(
        `INSERT INTO budget_usage (profile, provider, minute, calls, tokens, usd) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (profile, provider, minute) DO UPDATE SET
           calls = calls + excluded.calls, tokens = tokens + excluded.tokens, usd = usd + excluded.usd`,
      ),
      budgetSince: db.prepare<[string, number], Omit<BudgetRow, 'profile'>>(
        `SELECT provider, minute, calls, tokens, usd FROM budget_usage WHERE profile = ? AND minute >= ? ORDER BY provider, minute`,
      ),
      recentCalls: db.prepare<Record<string, unknown>, CallDbRow>(
        `SELECT at, profile, provider, host, model, status, latency_ms, input_tokens, output_tokens, cached_tokens,
           reasoning_tokens, cost_usd, cache_hit
         FROM router_calls WHERE ${CALL_FILTER} ORDER BY at DESC, id DESC LIMIT @limit`,
      ),
      byHost: db.prepare<Record<string, unknown>, CallAggregateRow>(aggregateSql('provider, host')),
      byProvider: db.prepare<Record<string, unknown>, CallAggregateRow>(aggregateSql('provider')),
      byProfile: db.prepare<Record<string, unknown>, ProfileAggregateRow>(aggregateSql('profile')),
      errors: db.prepare<Record<string, unknown>, ErrorCountRow>(
        `SELECT profile, provider, host, status, COUNT(*) AS n FROM router_calls
         WHERE ${CALL_FILTER} AND status != 'ok' GROUP BY profile, provider, host, status`,
      ),
      pruneCalls: db.prepare(`DELETE FROM router_calls WHERE at < ?`),
      pruneCache: db.prepare(`DELETE FROM prompt_cache WHERE expires_at <= ?`),
      pruneBudget: db.prepare(`DELETE FROM budget_usage WHERE minute < ?`),
    };
  }

  /** Everything the router buffered since its last flush, in one transaction. */
  write(writes: RouterWrites): void {
    if (writes.calls.length + writes.cache.length + writes.budget.length === 0) return;
    // Metrics and cache entries are advisory: their commit skips the fsync (the next sync of the
    // run's records, or any synchronous commit, syncs them too).
    this.connection.withoutSync(() => this.writeTx.immediate(writes));
  }

  /** A live cached answer's JSON, or undefined. */
  getCached(key: string, now: number): { value: string; expiresAt: number } | undefined {
    const row = this.stmt.getCache.get(key, now);
    return row ? { value: row.value, expiresAt: row.expires_at } : undefined;
  }

  /** A profile's budget buckets from `sinceMinute` on, oldest first per provider. */
  budgetUsage(profile: string, sinceMinute: number): Array<Omit<BudgetRow, 'profile'>> {
    return this.stmt.budgetSince.all(profile, sinceMinute);
  }

  recentCalls(filter: CallFilter, limit: number): CallRow[] {
    return this.stmt.recentCalls.all(params(filter, { limit })).map((r) => ({
      at: r.at,
      profile: r.profile,
      provider: r.provider,
      host: r.host,
      model: r.model,
      status: r.status,
      latencyMs: r.latency_ms,
      inputTokens: r.input_tokens,
      outputTokens: r.output_tokens,
      cachedTokens: r.cached_tokens,
      reasoningTokens: r.reasoning_tokens,
      costUsd: r.cost_usd,
      cacheHit: r.cache_hit === 1,
    }));
  }

  aggregateByHost(filter: CallFilter): CallAggregateRow[] {
    return this.stmt.byHost.all(params(filter));
  }

  aggregateByProvider(filter: CallFilter): CallAggregateRow[] {
    return this.stmt.byProvider.all(params(filter));
  }

  aggregateByProfile(filter: CallFilter): ProfileAggregateRow[] {
    return this.stmt.byProfile.all(params(filter));
  }

  errorCounts(filter: CallFilter): ErrorCountRow[] {
    return this.stmt.errors.all(params(filter));
  }

  /** Drops metrics older than `callsBefore`, expired cache entries and budget minutes out of every window. */
  prune(now: number, callsBefore: number, budgetBeforeMinute: number): void {
    this.db
      .transaction(() => {
        this.stmt.pruneCalls.run(callsBefore);
        this.stmt.pruneCache.run(now);
        this.stmt.pruneBudget.run(budgetBeforeMinute);
      })
      .immediate();
  }
}

function params(filter: CallFilter, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    since: filter.since,
    model: filter.model ?? null,
    provider: filter.provider ?? null,
    profile: filter.profile ?? null,
    ...extra,
  };
}
