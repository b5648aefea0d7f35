/**
 * The budget guard on a clock the test moves: a provider at its daily ceiling (calls, tokens or
 * USD) takes no more calls, a burst cannot overshoot (reservations come before calls), the window
 * reopens as old spend ages out, spend survives a restart, and profiles keep separate windows.
 */
import { describe, expect, it } from 'vitest';
import { failureOf } from '../helpers/failure-of.js';
import { FakeProvider } from './fake-provider.js';
import { catalog, host, manualClock, openaiProvider, request, router, tempStore, type TempStore, useFakeProviderAndStore } from './helpers.js';

let fake: FakeProvider;
let ts: TempStore;
useFakeProviderAndStore((f, t) => {
  fake = f;
  ts = t;
});

const DAY = 24 * 60 * 60_000;

function cat(budget: Record<string, number>, profiles?: unknown) {
  return catalog({
    providers: { p: openaiProvider(fake.url, { dailyBudget: budget }) },
    models: { m: { hosts: [host('p', 'budgeted', { inputPerMTok: 1_000_000, outputPerMTok: 1_000_000 })] } },
    ...(profiles ? { profiles } : {}),
  });
}

describe('budget guard', () => {
  it('stops calls at the ceiling and reopens when the window frees', async () => {
    const clock = manualClock();
    const r = router({ catalog: cat({ calls: 3 }), store: ts.store.router, now: clock.now, cache: { enabled: false } });
    const t0 = clock.now();
    for (let i = 0; i < 3; i++) {
      await r.generate(request('m', `q${i}`));
      clock.advance(60 * 60_000); // an hour between calls
    }
    const e = await failureOf(r.generate(request('m', 'over')));
    expect(e.code).toBe('budget_exceeded');
    expect(e.message).toMatch(/daily calls budget of 3/);
    // The window frees when the first call's minute ages out: 24 h after it.
    expect(clock.now() + e.retryAfterMs!).toBe(t0 + DAY + 60_000);
    expect(fake.count('budgeted')).toBe(3);
    expect(r.posture().models[0]!.hosts[0]).toMatchObject({ state: 'over_budget', until: t0 + DAY + 60_000 });

    clock.set(t0 + DAY + 60_000);
    expect((await r.generate(request('m', 'reopened'))).host).toBe('p/budgeted');
    expect(fake.count('budgeted')).toBe(4);
    await r.close();
  });

  it('reserves before calling, so a burst cannot overshoot', async () => {
    const r = router({ catalog: cat({ calls: 3 }), store: ts.store.router, cache: { enabled: false } });
    fake.always('budgeted', { kind: 'ok', delayMs: 50 });
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => r.generate(request('m', `q${i}`))));
    expect(results.filter((x) => x.status === 'fulfilled')).toHaveLength(3);
    expect(fake.count('budgeted')).toBe(3);
    await r.close();
  });

  it('counts tokens and USD from real usage, settled after the call', async () => {
    const clock = manualClock();
    // 18 tokens a call (11 in + 7 out); prices of $1 a token make it $18 a call.
    const r = router({ catalog: cat({ tokens: 40 }), store: ts.store.router, now: clock.now, cache: { enabled: false }, budgetOutputTokens: 5 });
    await r.generate(request('m', 'a'));
    await r.generate(request('m', 'b'));
    const e = await failureOf(r.generate(request('m', 'c')));
    expect(e.code).toBe('budget_exceeded');
    expect(e.message).toMatch(/tokens budget of 40/);
    await r.close();

    const other = tempStore();
    const usd = router({ catalog: cat({ usd: 40 }), store: other.store.router, now: clock.now, cache: { enabled: false }, budgetOutputTokens: 5 });
    await usd.generate(request('m', 'a'));
    await usd.generate(request('m', 'b'));
    expect((await failureOf(usd.generate(request('m', 'c')))).message).toMatch(/USD budget of 40/);
    await usd.close();
    other.cleanup();
  });

  it('refuses a call that alone exceeds the budget, not retryable', async () => {
    const r = router({ catalog: cat({ tokens: 100 }), store: ts.store.router, cache: { enabled: false } });
    const e = await failureOf(r.generate(request('m', 'x', { sampling: { maxTokens: 500 } })));
    expect(e.code).toBe('budget_exceeded');
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(/this call alone exceeds/);
    expect(fake.count()).toBe(0);
    await r.close();
  });

  it('remembers spend across a restart', async () => {
    const clock = manualClock();
    const r1 = router({ catalog: cat({ calls: 2 }), store: ts.store.router, now: clock.now, cache: { enabled: false } });
    await r1.generate(request('m', 'a'));
    await r1.generate(request('m', 'b'));
    await r1.close();
    const r2 = router({ catalog: cat({ calls: 2 }), store: ts.store.router, now: clock.now, cache: { enabled: false } });
    expect((await failureOf(r2.generate(request('m', 'c')))).code).toBe('budget_exceeded');
    await r2.close();
  });

  it('keeps a window and a budget per profile', async () => {
    const clock = manualClock();
    const profiles = { lab: { providers: { p: { dailyBudget: { calls: 1 } } } } };
    const def = router({ catalog: cat({ calls: 2 }, profiles), store: ts.store.router, now: clock.now, cache: { enabled: false } });
    await def.generate(request('m', 'a'));
    await def.generate(request('m', 'b'));
    expect((await failureOf(def.generate(request('m', 'c')))).code).toBe('budget_exceeded');
    await def.close();
    const lab = router({ catalog: cat({ calls: 2 }, profiles), store: ts.store.router, now: clock.now, cache: { enabled: false }, profile: 'lab' });
    expect(lab.profile).toBe('lab');
    await lab.generate(request('m', 'a'));
    expect((await failureOf(lab.generate(request('m', 'b')))).message).toMatch(/calls budget of 1 \(profile "lab"\)/);
    await lab.close();
    const rows = ts.store.db.prepare('SELECT profile, SUM(calls) AS calls FROM budget_usage GROUP BY profile ORDER BY profile').all();
    expect(rows).toEqual([
      { profile: 'default', calls: 2 },
      { profile: 'lab', calls: 1 },
    ]);
  });

  it('runs a call that names a profile under that profile: its budget, its window, its metrics tag', async () => {
    const clock = manualClock();
    const profiles = { judge: { providers: { p: { dailyBudget: { calls: 1 } } } } };
    const r = router({ catalog: cat({ calls: 3 }, profiles), store: ts.store.router, now: clock.now, cache: { enabled: false } });
    await r.generate(request('m', 'judge a', { profile: 'judge' }));
    const over = await failureOf(r.generate(request('m', 'judge b', { profile: 'judge' })));
    expect(over.message).toMatch(/calls budget of 1 \(profile "judge"\)/);
    // The sweep's own calls keep their own window in the same router.
    for (const q of ['a', 'b', 'c']) await r.generate(request('m', q));
    expect((await failureOf(r.generate(request('m', 'd')))).message).toMatch(/calls budget of 3 \(profile "default"\)/);
    const judged = r.metrics({ profile: 'judge', since: 0 });
    expect(judged.recent.map((c) => c.profile)).toEqual(['judge']);
    expect(judged.providers).toEqual([expect.objectContaining({ provider: 'p', calls: 1 })]);
    expect(r.metrics({ profile: 'default', since: 0 }).providers).toEqual([expect.objectContaining({ calls: 3 })]);
    await r.close();
  });

  it('fails over to another provider while one is over budget', async () => {
    const c = catalog({
      providers: { p: openaiProvider(fake.url, { dailyBudget: { calls: 1 } }), q: openaiProvider(fake.url) },
      models: { m: { hosts: [host('p', 'p-model'), host('q', 'q-model')] } },
    });
    const r = router({ catalog: c, store: ts.store.router, cache: { enabled: false } });
    const hosts = [];
    for (let i = 0; i < 4; i++) hosts.push((await r.generate(request('m', `q${i}`))).host);
    expect(hosts.filter((h) => h === 'p/p-model')).toHaveLength(1);
    expect(hosts.filter((h) => h === 'q/q-model')).toHaveLength(3);
    await r.close();
  });
  it('reports each budget window in the metrics: its limits and the spend the rolling window holds', async () => {
    const clock = manualClock();
    const profiles = { lab: { providers: { p: { dailyBudget: { calls: 5, usd: 2 } } } } };
    const r = router({ catalog: cat({ calls: 3 }, profiles), store: ts.store.router, now: clock.now, cache: { enabled: false } });
    await r.generate(request('m', 'one'));
    await r.generate(request('m', 'two'));
    const windows = r.metrics().budgets;
    expect(windows.map((w) => [w.profile, w.provider, w.limit])).toEqual([
      [r.profile, 'p', { calls: 3 }],
      ['judge', 'p', { calls: 3 }],
      ['lab', 'p', { calls: 5, usd: 2 }],
    ]);
    expect(windows[0]!.used.calls).toBe(2);
    expect(windows[0]!.windowMs).toBe(DAY);
    expect(windows[2]!.used).toEqual({ calls: 0, tokens: 0, usd: 0 });
    // Limited to a profile, only its windows.
    expect(r.metrics({ profile: 'lab' }).budgets.map((w) => w.profile)).toEqual(['lab']);
    // A day later the spend has aged out of the window.
    clock.advance(DAY + 60_000);
    expect(r.metrics().budgets[0]!.used.calls).toBe(0);
    await r.close();
  });
});
