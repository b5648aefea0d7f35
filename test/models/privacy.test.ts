/**
 * Privacy routing, counted at the provider: strict never sends a prompt to an unsafe host (not even
 * when every safe host fails), fallback uses an unsafe host only as the last resort, off uses all,
 * and an instance locked to strict stays strict whatever a run asks.
 */
import { describe, expect, it } from 'vitest';
import { privacyLockFromEnv } from '../../core/models/router/privacy.js';
import { failureOf } from '../helpers/failure-of.js';
import { FakeProvider } from './fake-provider.js';
import { catalog, host, openaiProvider, request, router, type TempStore, useFakeProviderAndStore } from './helpers.js';

let fake: FakeProvider;
let ts: TempStore;
useFakeProviderAndStore((f, t) => {
  fake = f;
  ts = t;
});

function cat() {
  return catalog({
    providers: {
      safe: openaiProvider(fake.url, { trainsOnData: false }),
      public: openaiProvider(fake.url, { trainsOnData: true }),
      mixed: openaiProvider(fake.url, { trainsOnData: 'per-model' }),
    },
    models: {
      both: { hosts: [host('public', 'unsafe-1'), host('safe', 'safe-1'), host('mixed', 'unsafe-2', { trainsOnData: true })] },
      unsafeOnly: { hosts: [host('public', 'unsafe-3')] },
      perModel: { hosts: [host('mixed', 'safe-2', { trainsOnData: false })] },
    },
  });
}

const unsafeCount = () => fake.count('unsafe-1') + fake.count('unsafe-2') + fake.count('unsafe-3');

describe('privacy', () => {
  it('strict never sends to an unsafe host, even when the safe host fails', async () => {
    const r = router({ catalog: cat(), store: ts.store.router, cache: { enabled: false }, maxCooldownWaitMs: 0 });
    for (let i = 0; i < 10; i++) expect((await r.generate(request('both', `q${i}`))).host).toBe('safe/safe-1');
    fake.always('safe-1', { kind: 'status', status: 500 });
    const e = await failureOf(r.generate(request('both', 'fails')));
    expect(e.code).toBe('server_error');
    const blocked = await failureOf(r.generate(request('unsafeOnly')));
    expect(blocked.code).toBe('privacy_blocked');
    expect(blocked.retryable).toBe(false);
    expect(unsafeCount()).toBe(0);
    // A per-model provider's host is as safe as its own entry says.
    expect((await r.generate(request('perModel'))).host).toBe('mixed/safe-2');
    await r.close();
  });

  it('fallback tries the safe host first and an unsafe one only as the last resort', async () => {
    const r = router({ catalog: cat(), store: ts.store.router, cache: { enabled: false }, maxCooldownWaitMs: 0 });
    for (let i = 0; i < 10; i++) {
      expect((await r.generate(request('both', `q${i}`, { privacy: 'fallback' }))).host).toBe('safe/safe-1');
    }
    expect(unsafeCount()).toBe(0);
    fake.always('safe-1', { kind: 'status', status: 500 });
    const res = await r.generate(request('both', 'safe fails', { privacy: 'fallback' }));
    expect(res.host).toMatch(/unsafe/);
    expect(fake.count('safe-1')).toBe(11);
    expect(unsafeCount()).toBe(1);
    await r.close();
  });

  it('fallback waits for a safe host that returns shortly rather than leak', async () => {
    const r = router({ catalog: cat(), store: ts.store.router, cache: { enabled: false }, maxCooldownWaitMs: 2000 });
    fake.next('safe-1', { kind: 'status', status: 429, headers: { 'retry-after': '0.3' } });
    // The first call's only safe host fails; the unsafe hosts are its last resort.
    await r.generate(request('both', 'first', { privacy: 'fallback' }));
    const before = unsafeCount();
    // The next call finds the safe host cooling for a moment: it waits instead of leaking.
    const res = await r.generate(request('both', 'second', { privacy: 'fallback' }));
    expect(res.host).toBe('safe/safe-1');
    expect(unsafeCount()).toBe(before);
    await r.close();
  });

  it('off uses every host', async () => {
    const r = router({ catalog: cat(), store: ts.store.router, cache: { enabled: false } });
    const hosts = new Set<string>();
    for (let i = 0; i < 6; i++) hosts.add((await r.generate(request('both', `q${i}`, { privacy: 'off' }))).host);
    expect(hosts).toEqual(new Set(['public/unsafe-1', 'safe/safe-1', 'mixed/unsafe-2']));
    await r.close();
  });

  it('a lock to strict overrides what a run asks for', async () => {
    const r = router({ catalog: cat(), store: ts.store.router, cache: { enabled: false }, env: { PANOPTES_PRIVACY_LOCK: 'strict' } });
    expect(r.privacyLock).toBe('strict');
    for (let i = 0; i < 6; i++) expect((await r.generate(request('both', `q${i}`, { privacy: 'off' }))).host).toBe('safe/safe-1');
    const e = await failureOf(r.generate(request('unsafeOnly', 'x', { privacy: 'off' })));
    expect(e.code).toBe('privacy_blocked');
    expect(unsafeCount()).toBe(0);
    expect(r.posture().privacyLock).toBe('strict');
    await r.close();
    expect(() => privacyLockFromEnv({ PANOPTES_PRIVACY_LOCK: 'off' })).toThrow(/may only be "strict"/);
    expect(privacyLockFromEnv({})).toBeNull();
  });

  it('posture says which models have a privacy-safe host routable now', async () => {
    const r = router({ catalog: cat(), store: ts.store.router, cache: { enabled: false } });
    const p = Object.fromEntries(r.posture().models.map((m) => [m.model, m]));
    expect(p.both).toMatchObject({ routable: true, privacySafeRoutable: true });
    expect(p.unsafeOnly).toMatchObject({ routable: true, privacySafeRoutable: false });
    fake.always('safe-1', { kind: 'status', status: 401 });
    await r.generate(request('both', 'x', { privacy: 'off' })).catch(() => undefined);
    await r.generate(request('both', 'y')).catch(() => undefined);
    const after = r.posture().models.find((m) => m.model === 'both')!;
    expect(after.privacySafeRoutable).toBe(false);
    expect(after.hosts.find((h) => h.id === 'safe/safe-1')).toMatchObject({ state: 'blacklisted', until: null });
    await r.close();
  });
});
