/**
 * The bounce loop over real HTTP: a call fails over across hosts that answer 429 with Retry-After,
 * 500, and hang, each tried once; the failed hosts cool down for the right time; when nothing is
 * eligible the error says why and when; a host cooling down briefly is waited for.
 */
import { describe, expect, it } from 'vitest';
import { failureOf } from '../helpers/failure-of.js';
import { FakeProvider } from './fake-provider.js';
import { catalog, host, manualClock, openaiProvider, request, router, type TempStore, useFakeProviderAndStore } from './helpers.js';

let fake: FakeProvider;
let ts: TempStore;
useFakeProviderAndStore((f, t) => {
  fake = f;
  ts = t;
});

function fourHosts() {
  return catalog({
    providers: {
      a: openaiProvider(fake.url),
      b: openaiProvider(fake.url),
      c: openaiProvider(fake.url, { timeoutMs: 300 }),
      d: openaiProvider(fake.url),
    },
    models: {
      m: { hosts: [host('a', 'a-429'), host('b', 'b-500'), host('c', 'c-hang'), host('d', 'd-ok')] },
    },
  });
}

describe('failover', () => {
  it('bounces across a 429 (Retry-After), a 500 and a hang to the healthy host, each tried once', async () => {
    fake.always('a-429', { kind: 'status', status: 429, headers: { 'retry-after': '20' } });
    fake.always('b-500', { kind: 'status', status: 500 });
    fake.always('c-hang', { kind: 'hang' });
    const r = router({ catalog: fourHosts(), store: ts.store.router, cache: { enabled: false } });
    const started = Date.now();
    const res = await r.generate(request('m'));
    expect(res.host).toBe('d/d-ok');
    expect(res.text).toBe('answer from d-ok');
    expect(res.cached).toBe(false);
    expect([fake.count('a-429'), fake.count('b-500'), fake.count('c-hang'), fake.count('d-ok')]).toEqual([1, 1, 1, 1]);

    // Each failed host cools down as its failure says: 429 for its Retry-After, the others a short back-off.
    const posture = r.posture().models.find((m) => m.model === 'm')!;
    const byId = Object.fromEntries(posture.hosts.map((h) => [h.id, h]));
    expect(byId['a/a-429']!.state).toBe('cooling');
    expect(byId['a/a-429']!.until! - started).toBeGreaterThanOrEqual(19_000);
    expect(byId['a/a-429']!.until! - started).toBeLessThanOrEqual(21_000);
    expect(byId['b/b-500']!.state).toBe('cooling');
    expect(byId['c/c-hang']!.state).toBe('cooling');
    expect(byId['c/c-hang']!.reason).toMatch(/timeout/);
    expect(byId['d/d-ok']!.state).toBe('ready');
    expect(posture.privacySafeRoutable).toBe(true);

    // The next call goes straight to the healthy host: the others are cooling down.
    await r.generate(request('m', 'second'));
    expect([fake.count('a-429'), fake.count('b-500'), fake.count('c-hang'), fake.count('d-ok')]).toEqual([1, 1, 1, 2]);

    const m = r.metrics({ model: 'm' });
    const errors = Object.fromEntries(m.hosts.map((h) => [h.host, h.errors]));
    expect(errors['a/a-429']).toEqual({ rate_limited: 1 });
    expect(errors['b/b-500']).toEqual({ server_error: 1 });
    expect(errors['c/c-hang']).toEqual({ timeout: 1 });
    expect(m.hosts.find((h) => h.host === 'd/d-ok')!.calls).toBe(2);
    await r.close();
  });

  it('counts an empty 200 as a failure and fails over', async () => {
    const cat = catalog({
      providers: { a: openaiProvider(fake.url), b: openaiProvider(fake.url) },
      models: { m: { hosts: [host('a', 'a-empty'), host('b', 'b-ok')] } },
    });
    fake.always('a-empty', { kind: 'empty' });
    const r = router({ catalog: cat, store: ts.store.router, cache: { enabled: false } });
    const res = await r.generate(request('m'));
    expect(res.host).toBe('b/b-ok');
    expect(r.metrics().hosts.find((h) => h.host === 'a/a-empty')!.errors).toEqual({ empty_output: 1 });
    await r.close();
  });

  it('counts what an empty answer was billed: its tokens in the metrics and on the answer (billedBefore), or on the error when every host answers empty', async () => {
    const cat = catalog({
      providers: { a: openaiProvider(fake.url), b: openaiProvider(fake.url) },
      models: { m: { hosts: [host('a', 'a-empty'), host('b', 'b-ok')] }, n: { hosts: [host('a', 'a-empty'), host('b', 'b-empty')] } },
    });
    fake.always('a-empty', { kind: 'empty' });
    fake.always('b-empty', { kind: 'empty' });
    const r = router({ catalog: cat, store: ts.store.router, cache: { enabled: false } });
    const res = await r.generate(request('m'));
    expect(res.host).toBe('b/b-ok');
    // The fake bills 11 in and 7 out for every answer, empty or not.
    expect(res.billedBefore).toEqual({ calls: 1, inputTokens: 11, outputTokens: 7 });
    const empty = r.metrics().hosts.find((h) => h.host === 'a/a-empty')!;
    expect(empty).toMatchObject({ errors: { empty_output: 1 }, inputTokens: 11, outputTokens: 7 });
    expect(empty.costUsd).toBeGreaterThan(0);
    const e = await failureOf(r.generate(request('n')));
    expect(e).toMatchObject({ code: 'empty_output', billed: { calls: 2, inputTokens: 22, outputTokens: 14 } });
    await r.close();
  });

  it('when every host fails, throws the last failure with when the soonest host returns', async () => {
    const cat = catalog({
      providers: { a: openaiProvider(fake.url), b: openaiProvider(fake.url) },
      models: { m: { hosts: [host('a', 'a-429'), host('b', 'b-429')] } },
    });
    fake.always('a-429', { kind: 'status', status: 429, headers: { 'retry-after': '40' } });
    fake.always('b-429', { kind: 'status', status: 429, headers: { 'retry-after': '25' } });
    const r = router({ catalog: cat, store: ts.store.router, cache: { enabled: false }, maxCooldownWaitMs: 1000 });
    const e = await failureOf(r.generate(request('m')));
    expect(e.code).toBe('rate_limited');
    expect(e.retryable).toBe(true);
    expect(fake.count('a-429') + fake.count('b-429')).toBe(2);

    // Now nothing is eligible: a typed error that names each host, why, and the soonest return.
    const e2 = await failureOf(r.generate(request('m', 'again')));
    expect(e2.code).toBe('no_host');
    expect(e2.retryable).toBe(true);
    expect(e2.retryAfterMs).toBeGreaterThan(23_000);
    expect(e2.retryAfterMs).toBeLessThanOrEqual(25_000);
    expect(e2.message).toMatch(/a\/a-429: cooling until .*rate_limited/);
    expect(e2.message).toMatch(/b\/b-429: cooling until/);
    expect(fake.count('a-429') + fake.count('b-429')).toBe(2);
    await r.close();
  });

  it('waits for a host that cools down briefly instead of failing', async () => {
    const cat = catalog({ providers: { a: openaiProvider(fake.url) }, models: { m: { hosts: [host('a', 'a')] } } });
    fake.next('a', { kind: 'status', status: 429, headers: { 'retry-after': '0.4' } });
    const r = router({ catalog: cat, store: ts.store.router, cache: { enabled: false } });
    const e = await failureOf(r.generate(request('m')));
    expect(e.code).toBe('rate_limited');
    expect(e.retryAfterMs).toBe(400);
    const started = performance.now();
    const res = await r.generate(request('m', 'again'));
    expect(res.host).toBe('a/a');
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    expect(fake.count('a')).toBe(2);
    await r.close();
  });

  it('gives up waiting after a bounded number of waits, saying the host is still cooling', async () => {
    const cat = catalog({ providers: { a: openaiProvider(fake.url) }, models: { m: { hosts: [host('a', 'a')] } } });
    fake.next('a', { kind: 'status', status: 429, headers: { 'retry-after': '0.05' } });
    // A clock that never moves: the cooldown never ends, however long the call waits.
    const clock = manualClock();
    const r = router({ catalog: cat, store: ts.store.router, cache: { enabled: false }, now: clock.now });
    await failureOf(r.generate(request('m')));
    const e = await failureOf(r.generate(request('m', 'again')));
    expect(e.code).toBe('no_host');
    expect(e.retryable).toBe(true);
    expect(e.retryAfterMs).toBe(50);
    expect(e.message).toMatch(/still cooling down; a\/a returns first/);
    expect(fake.count('a')).toBe(1);
    await r.close();
  });

  it('keeps to one attempt budget per call', async () => {
    fake.always('a-429', { kind: 'status', status: 500 });
    fake.always('b-500', { kind: 'status', status: 500 });
    fake.always('c-hang', { kind: 'status', status: 500 });
    const r = router({ catalog: fourHosts(), store: ts.store.router, cache: { enabled: false }, maxHostTriesPerCall: 2, maxCooldownWaitMs: 0 });
    const e = await failureOf(r.generate(request('m')));
    expect(e.code).toBe('server_error');
    expect(fake.count()).toBe(2);
    await r.close();
  });

  it('does not fail over on a request every host would refuse', async () => {
    const cat = catalog({
      providers: { a: openaiProvider(fake.url), b: openaiProvider(fake.url) },
      models: { m: { hosts: [host('a', 'a-400'), host('b', 'b')] } },
    });
    fake.always('a-400', { kind: 'status', status: 400, body: { error: { message: 'temperature must be <= 2' } } });
    const r = router({ catalog: cat, store: ts.store.router, cache: { enabled: false } });
    const e = await failureOf(r.generate(request('m')));
    expect(e.code).toBe('bad_request');
    expect(fake.count('b')).toBe(0);
    await r.close();
    // ...but a host without the model, or without room for the prompt, is one host's problem.
    fake.always('a-400', { kind: 'status', status: 404 });
    const r2 = router({ catalog: cat, store: ts.store.router, cache: { enabled: false } });
    const res = await r2.generate(request('m', 'other'));
    expect(res.host).toBe('b/b');
    expect(fake.count('a-400')).toBe(2);
    expect(r2.posture().models[0]!.hosts[0]!.state).toBe('blacklisted');
    await r2.close();
  });

  it('blacklists a provider whose key is refused and moves to the next', async () => {
    const cat = catalog({
      providers: { a: openaiProvider(fake.url), b: openaiProvider(fake.url) },
      models: { m: { hosts: [host('a', 'a-401'), host('b', 'b')] }, n: { hosts: [host('a', 'a-other')] } },
    });
    fake.always('a-401', { kind: 'status', status: 401 });
    const r = router({ catalog: cat, store: ts.store.router, cache: { enabled: false } });
    expect((await r.generate(request('m'))).host).toBe('b/b');
    const posture = r.posture();
    // The key is the provider's: every model it hosts is out.
    const n = posture.models.find((x) => x.model === 'n')!;
    expect(n.hosts[0]!.state).toBe('blacklisted');
    expect(n.routable).toBe(false);
    const e = await failureOf(r.generate(request('n')));
    expect(e.code).toBe('no_host');
    expect(e.retryable).toBe(false);
    expect(fake.count('a-other')).toBe(0);
    await r.close();
  });
});
