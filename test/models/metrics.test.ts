/**
 * Router metrics in SQLite: aggregates per host and provider (calls, errors by code, nearest-rank
 * p50/p95 over provider calls only, tokens, cost, cache hits), filters, and the write-behind that
 * commits in batches (by time or by row count) instead of once per call.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WriteBehind } from '../../core/models/router/write-behind.js';
import type { CallRow } from '../../core/store/router-store.js';
import { tempStore, type TempStore } from './helpers.js';

let ts: TempStore;
beforeEach(() => {
  ts = tempStore();
});
afterEach(() => ts.cleanup());

function call(over: Partial<CallRow>): CallRow {
  return {
    at: 1000,
    profile: 'default',
    provider: 'p',
    host: 'p/x',
    model: 'm',
    status: 'ok',
    latencyMs: 10,
    inputTokens: 1,
    outputTokens: 2,
    cachedTokens: null,
    reasoningTokens: null,
    costUsd: 0.5,
    cacheHit: false,
    ...over,
  };
}

const count = (ts: TempStore) => (ts.store.db.prepare('SELECT COUNT(*) AS n FROM router_calls').get() as { n: number }).n;

describe('router metrics', () => {
  it('aggregates per host and provider in SQL', () => {
    const rs = ts.store.router;
    const calls: CallRow[] = [];
    // Host p/x: latencies 1..100 ms, five of them failed.
    for (let i = 1; i <= 100; i++) calls.push(call({ latencyMs: i, status: i <= 3 ? 'rate_limited' : i <= 5 ? 'timeout' : 'ok' }));
    // Host p/y: two calls and two cache hits (which must not drag its latency down).
    calls.push(call({ host: 'p/y', latencyMs: 200 }), call({ host: 'p/y', latencyMs: 400 }));
    calls.push(call({ host: 'p/y', latencyMs: 0, cacheHit: true, costUsd: 0 }), call({ host: 'p/y', latencyMs: 0, cacheHit: true, costUsd: 0 }));
    // Provider q, another model, and an old call outside the window.
    calls.push(call({ provider: 'q', host: 'q/z', model: 'n', latencyMs: 50 }));
    calls.push(call({ at: 10, latencyMs: 9999 }));
    rs.write({ calls, cache: [], budget: [] });

    const filter = { since: 500 };
    const hosts = Object.fromEntries(rs.aggregateByHost(filter).map((h) => [h.host, h]));
    expect(hosts['p/x']).toMatchObject({ calls: 100, p50LatencyMs: 50, p95LatencyMs: 95, inputTokens: 100, outputTokens: 200, cacheHits: 0 });
    expect(hosts['p/x']!.costUsd).toBeCloseTo(50);
    expect(hosts['p/y']).toMatchObject({ calls: 2, p50LatencyMs: 200, p95LatencyMs: 400, cacheHits: 2 });
    expect(hosts['q/z']).toMatchObject({ calls: 1, p50LatencyMs: 50, p95LatencyMs: 50 });
    const providers = Object.fromEntries(rs.aggregateByProvider(filter).map((p) => [p.provider, p]));
    expect(providers.p).toMatchObject({ host: null, calls: 102, cacheHits: 2 });
    expect(rs.errorCounts(filter)).toEqual(
      expect.arrayContaining([
        { profile: 'default', provider: 'p', host: 'p/x', status: 'rate_limited', n: 3 },
        { profile: 'default', provider: 'p', host: 'p/x', status: 'timeout', n: 2 },
      ]),
    );
    expect(rs.aggregateByHost({ since: 500, model: 'n' }).map((h) => h.host)).toEqual(['q/z']);
    expect(rs.aggregateByHost({ since: 500, provider: 'q' }).map((h) => h.host)).toEqual(['q/z']);
    expect(rs.recentCalls({ since: 0 }, 3)).toHaveLength(3);
    expect(rs.recentCalls({ since: 0 }, 1000)).toHaveLength(106);
  });

  it('commits in batches: after the interval, or at once when a batch is full', async () => {
    const rs = ts.store.router;
    const wb = new WriteBehind(rs, { flushMs: 50, maxRows: 10 });
    for (let i = 0; i < 5; i++) wb.call(call({}));
    expect(count(ts)).toBe(0);
    await new Promise((r) => setTimeout(r, 120));
    expect(count(ts)).toBe(5);
    for (let i = 0; i < 10; i++) wb.call(call({}));
    expect(count(ts)).toBe(5); // never inside the caller's turn
    await new Promise((r) => setImmediate(r));
    expect(count(ts)).toBe(15);
    wb.call(call({}));
    wb.close();
    expect(count(ts)).toBe(16);
  });

  it('prunes old metrics, expired cache entries and budget minutes out of the window', () => {
    const rs = ts.store.router;
    rs.write({
      calls: [call({ at: 10 }), call({ at: 5000 })],
      cache: [
        { key: 'a', value: '{}', createdAt: 0, expiresAt: 100 },
        { key: 'b', value: '{}', createdAt: 0, expiresAt: 10_000 },
      ],
      budget: [
        { profile: 'default', provider: 'p', minute: 1, calls: 1, tokens: 1, usd: 1 },
        { profile: 'default', provider: 'p', minute: 50, calls: 1, tokens: 1, usd: 1 },
      ],
    });
    rs.prune(1000, 1000, 10);
    expect(count(ts)).toBe(1);
    expect(rs.getCached('a', 0)).toBeUndefined();
    expect(rs.getCached('b', 1000)).toEqual({ value: '{}', expiresAt: 10_000 });
    expect(rs.budgetUsage('default', 0).map((b) => b.minute)).toEqual([50]);
  });
});
