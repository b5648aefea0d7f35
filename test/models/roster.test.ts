/**
 * The roster, `frontierOk`, host probes and per-profile metrics, over real HTTP to a fake provider
 * and a real SQLite store: frontier judgements must be dated; `frontierOk` is true exactly when two
 * frontier models have a privacy-safe host that can take a call now, and says false rather than
 * count an unsafe or a non-frontier host; a probe sends one 16-token call to every host, calls no
 * host whose key is missing, and marks a host that refuses so routing skips it; metrics filter by
 * profile and total per profile.
 */
import { describe, expect, it } from 'vitest';
import { PanoptesError } from '../../core/domain.js';
import { FakeProvider } from './fake-provider.js';
import { catalog, host, openaiProvider, request, router, type TempStore, useFakeProviderAndStore } from './helpers.js';

let fake: FakeProvider;
let ts: TempStore;
useFakeProviderAndStore((f, t) => {
  fake = f;
  ts = t;
});

/** Three frontier models (two with a safe host, one only on an unsafe host) and a safe non-frontier one. */
function panel(extra: { keyed?: boolean } = {}) {
  return catalog({
    providers: {
      a: openaiProvider(fake.url),
      b: openaiProvider(fake.url, extra.keyed ? { apiKeyEnv: 'B_KEY' } : {}),
      open: openaiProvider(fake.url, { trainsOnData: true }),
      small: openaiProvider(fake.url),
    },
    models: {
      alpha: { label: 'Alpha', frontier: true, frontierAsOf: '2026-11', hosts: [host('a', 'alpha-a', { contextWindow: 64000 })] },
      beta: { frontier: true, frontierAsOf: '2026-11-02', hosts: [host('b', 'beta-b')] },
      gamma: { frontier: true, frontierAsOf: '2026-10', hosts: [host('open', 'gamma-open')] },
      delta: { hosts: [host('small', 'delta-small', { inputPerMTok: 0.1, outputPerMTok: 0.4 })] },
    },
  });
}

describe('the roster and frontier_ok', () => {
  it('refuses a frontier judgement without its date, and a date that is not one', () => {
    const base = { providers: { a: { kind: 'mock', trainsOnData: false } } };
    expect(() => catalog({ ...base, models: { m: { frontier: true, hosts: [host('a', 'x')] } } })).toThrow(/models\.m\.frontierAsOf.*frontierAsOf/);
    expect(() => catalog({ ...base, models: { m: { frontier: true, frontierAsOf: 'last spring', hosts: [host('a', 'x')] } } })).toThrow(
      /YYYY-MM/,
    );
  });

  it('lists every model with hosts, privacy, health, window, price and the frontier flag', () => {
    const r = router({ catalog: panel(), store: ts.store.router });
    const roster = r.roster();
    expect(roster.models.map((m) => m.model)).toEqual(['alpha', 'beta', 'delta', 'gamma']);
    const alpha = roster.models[0]!;
    expect(alpha).toMatchObject({
      label: 'Alpha',
      frontier: true,
      frontierAsOf: '2026-11',
      contextWindow: 64000,
      inputPerMTok: 1,
      outputPerMTok: 2,
      privacySafe: true,
      routable: true,
      privacySafeRoutable: true,
    });
    expect(alpha.hosts[0]).toMatchObject({ id: 'a/alpha-a', kind: 'openai', model: 'alpha-a', state: 'ready', until: null, lastProbe: null });
    expect(roster.models.find((m) => m.model === 'delta')).toMatchObject({ frontier: false, frontierAsOf: null, inputPerMTok: 0.1 });
    expect(roster.models.find((m) => m.model === 'gamma')).toMatchObject({ privacySafe: false, routable: true, privacySafeRoutable: false });
    expect(roster.frontierOk).toBe(true);
    expect(roster.frontierReady).toEqual(['alpha', 'beta']);
  });

  it('says false when a frontier model loses its only safe host, though unsafe and non-frontier hosts still answer', async () => {
    fake.always('beta-b', { kind: 'status', status: 401 });
    const r = router({ catalog: panel(), store: ts.store.router, cache: { enabled: false } });
    await expect(r.generate(request('beta'))).rejects.toMatchObject({ code: 'auth' });
    const posture = r.posture();
    expect(posture.frontierOk).toBe(false);
    expect(posture.frontierReady).toEqual(['alpha']);
    // gamma (frontier, unsafe host) and delta (safe, not frontier) are routable: neither counts.
    expect(posture.models.find((m) => m.model === 'gamma')!.routable).toBe(true);
    expect(posture.models.find((m) => m.model === 'delta')!.privacySafeRoutable).toBe(true);
    expect(posture.models.find((m) => m.model === 'beta')!.hosts[0]).toMatchObject({ state: 'blacklisted', until: null });
  });

  it('counts a host whose key is missing as not routable', () => {
    const r = router({ catalog: panel({ keyed: true }), store: ts.store.router });
    expect(r.posture().frontierOk).toBe(false);
    const keyed = router({ catalog: panel({ keyed: true }), store: ts.store.router, env: { B_KEY: 'k' } });
    expect(keyed.posture().frontierOk).toBe(true);
  });
});

describe('probes', () => {
  it('sends one 16-token call to every host, marks the ones that fail, and calls none without its key', async () => {
    fake.always('beta-b', { kind: 'status', status: 404 });
    fake.always('gamma-open', { kind: 'status', status: 401 });
    const r = router({ catalog: panel(), store: ts.store.router, env: {} });
    const report = await r.probe();
    expect(report.results.map((x) => [x.host, x.status, x.state])).toEqual([
      ['a/alpha-a', 'ok', 'ready'],
      ['b/beta-b', 'bad_request', 'blacklisted'],
      ['small/delta-small', 'ok', 'ready'],
      ['open/gamma-open', 'auth', 'blacklisted'],
    ]);
    expect(report).toMatchObject({ ok: 2, failed: 2 });
    expect(fake.arrivals).toHaveLength(4);
    for (const a of fake.arrivals) expect(a.body.max_tokens ?? a.body.max_completion_tokens).toBe(16);
    // The failing hosts are out of routing now, and the roster shows each probe.
    await expect(r.generate(request('beta'))).rejects.toBeInstanceOf(PanoptesError);
    expect(fake.count('beta-b')).toBe(1);
    const beta = r.roster().models.find((m) => m.model === 'beta')!;
    expect(beta.hosts[0]!.lastProbe).toMatchObject({ status: 'bad_request' });
    expect(beta.hosts[0]!.lastProbe!.message).toMatch(/404/);
    expect(r.roster().frontierOk).toBe(false);
    // Every probe is a metric, like any call.
    expect(r.metrics().hosts.find((h) => h.host === 'b/beta-b')!.errors).toEqual({ bad_request: 1 });

    const keyed = router({ catalog: panel({ keyed: true }), store: ts.store.router, env: {} });
    const before = fake.arrivals.length;
    const only = await keyed.probe({ models: ['beta'] });
    expect(only.results).toEqual([expect.objectContaining({ host: 'b/beta-b', status: 'no_key', message: 'B_KEY is not set', state: 'no_key' })]);
    expect(fake.arrivals.length).toBe(before);
  });

  it('marks even a model\'s only host when its probe times out, and refuses a model not in the catalog', async () => {
    fake.always('alpha-a', { kind: 'hang' });
    const cat = catalog({
      providers: { a: openaiProvider(fake.url, { timeoutMs: 200 }) },
      models: { alpha: { hosts: [host('a', 'alpha-a')] } },
    });
    const r = router({ catalog: cat, store: ts.store.router });
    const report = await r.probe({ models: ['alpha'] });
    expect(report.results[0]).toMatchObject({ status: 'timeout', state: 'cooling' });
    await expect(r.probe({ models: ['nope'] })).rejects.toThrow(/cannot probe "nope": not in the catalog/);
  });
});

describe('per-profile metrics', () => {
  it('filters by profile and totals each profile apart', async () => {
    fake.always('alpha-a', { kind: 'ok', inputTokens: 10, outputTokens: 5 });
    const cat = panel();
    const work = router({ catalog: cat, store: ts.store.router, profile: 'work', cache: { enabled: false } });
    const home = router({ catalog: cat, store: ts.store.router, profile: 'home', cache: { enabled: false } });
    for (let i = 0; i < 3; i++) await work.generate(request('alpha', `q${i}`));
    await home.generate(request('alpha', 'h'));
    fake.always('alpha-a', { kind: 'status', status: 400 });
    await expect(home.generate(request('alpha', 'bad'))).rejects.toMatchObject({ code: 'bad_request' });
    work.flush();
    home.flush();

    const all = work.metrics();
    expect(all.profile).toBeNull();
    expect(all.profiles.map((p) => [p.profile, p.calls, p.inputTokens, p.errors])).toEqual([
      ['home', 2, 10, { bad_request: 1 }],
      ['work', 3, 30, {}],
    ]);
    expect(all.providers[0]!.calls).toBe(5);

    const onlyHome = work.metrics({ profile: 'home' });
    expect(onlyHome.profile).toBe('home');
    expect(onlyHome.profiles.map((p) => p.profile)).toEqual(['home']);
    expect(onlyHome.providers[0]).toMatchObject({ calls: 2, errors: { bad_request: 1 } });
    expect(onlyHome.recent.every((c) => c.profile === 'home')).toBe(true);
    expect(work.metrics({ profile: 'nobody' })).toMatchObject({ recent: [], hosts: [], providers: [], profiles: [] });
  });
});
