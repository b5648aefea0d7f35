/**
 * Pacing measured where it matters, at the provider: with 32 callers at once, the fake server's
 * arrival times stay under the provider's RPM, and never more calls are open than its max
 * concurrency.
 */
import { describe, expect, it } from 'vitest';
import { FakeProvider } from './fake-provider.js';
import { catalog, host, openaiProvider, request, router, type TempStore, useFakeProviderAndStore } from './helpers.js';

let fake: FakeProvider;
let ts: TempStore;
useFakeProviderAndStore((f, t) => {
  fake = f;
  ts = t;
});

describe('pacing', () => {
  it('holds an RPM limit under 32 concurrent callers', async () => {
    const rpm = 600; // one call per 100 ms
    const interval = 60_000 / rpm;
    const cat = catalog({
      providers: { p: openaiProvider(fake.url, { rpm }) },
      models: { m: { hosts: [host('p', 'paced')] } },
    });
    const r = router({ catalog: cat, store: ts.store.router, cache: { enabled: false } });
    // One call first, so the client's first-call set-up (modules, connection) does not skew the measure.
    await r.generate(request('m', 'warm-up'));
    const results = await Promise.all(Array.from({ length: 32 }, (_, i) => r.generate(request('m', `question ${i}`))));
    expect(results).toHaveLength(32);
    const at = fake.arrivals
      .slice(1)
      .map((a) => a.at)
      .sort((a, b) => a - b);
    expect(at).toHaveLength(32);
    // The limit, as a provider counts it: calls per window. Windows of one second (rpm / 60 calls) are
    // long next to the delivery jitter of a loaded two-core machine (client and server share this
    // process), which may move an arrival by up to one interval: hence + 2, not + 1.
    for (let i = 0; i < at.length; i++) {
      const inWindow = at.filter((t) => t >= at[i]! && t < at[i]! + 1000).length;
      expect(inWindow).toBeLessThanOrEqual(rpm / 60 + 2);
    }
    // 32 calls span at least 31 intervals, less one interval of jitter; and pacing does not crawl.
    const span = at.at(-1)! - at[0]!;
    expect(span).toBeGreaterThanOrEqual(30 * interval);
    expect(span).toBeLessThan(31 * interval + 1500);
    await r.close();
  });

  it('keeps at most maxConcurrency calls open at the provider', async () => {
    const cat = catalog({
      providers: { p: openaiProvider(fake.url, { maxConcurrency: 3 }) },
      models: { m: { hosts: [host('p', 'slow')] } },
    });
    fake.always('slow', { kind: 'ok', delayMs: 40 });
    const r = router({ catalog: cat, store: ts.store.router, cache: { enabled: false } });
    await Promise.all(Array.from({ length: 32 }, (_, i) => r.generate(request('m', `q${i}`))));
    expect(fake.count('slow')).toBe(32);
    expect(fake.maxInFlight).toBe(3);
    await r.close();
  });

  it('paces each provider on its own', async () => {
    const cat = catalog({
      providers: { slow: openaiProvider(fake.url, { rpm: 60 }), fast: openaiProvider(fake.url) },
      models: { a: { hosts: [host('slow', 'slow-model')] }, b: { hosts: [host('fast', 'fast-model')] } },
    });
    const r = router({ catalog: cat, store: ts.store.router, cache: { enabled: false } });
    await r.generate(request('a', 'first'));
    const pending = r.generate(request('a', 'second')); // waits a second for its slot
    const started = performance.now();
    await Promise.all(Array.from({ length: 10 }, (_, i) => r.generate(request('b', `q${i}`))));
    expect(performance.now() - started).toBeLessThan(500);
    await pending;
    await r.close();
  });
});
