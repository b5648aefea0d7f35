/**
 * The prompt cache: a hit only for exactly the same request (every key field changes the key) on
 * the same instrument (a model moved to another host model, endpoint, provider kind or answer-shaping
 * option misses; an edit of limits, prices or host order hits), never across privacy modes,
 * epochs independent unless shared, only successes stored, a TTL,
 * `skipPromptCache` neither reading nor writing, and entries that survive the process (SQLite), or
 * live in memory for a router given no store.
 */
import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../core/models/model-client.js';
import { promptCacheKey } from '../../core/models/router/prompt-cache.js';
import { FakeProvider } from './fake-provider.js';
import { catalog, host, manualClock, openaiProvider, request, router, type TempStore, useFakeProviderAndStore } from './helpers.js';

let fake: FakeProvider;
let ts: TempStore;
useFakeProviderAndStore((f, t) => {
  fake = f;
  ts = t;
});

function cat() {
  return catalog({
    providers: { p: openaiProvider(fake.url), q: openaiProvider(fake.url, { trainsOnData: true }) },
    models: { m: { hosts: [host('p', 'model-m')] }, other: { hosts: [host('p', 'model-o')] }, pub: { hosts: [host('q', 'model-q')] } },
  });
}

const base: ModelRequest = {
  model: 'm',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Is the sky blue?' },
  ],
  sampling: { temperature: 0.2, topP: 0.9, maxTokens: 64, seed: 1, stop: ['END'] },
  privacy: 'strict',
  skipPromptCache: false,
  epoch: 1,
};

describe('prompt cache', () => {
  it('hits on the same request, marked cached, with no call', async () => {
    const r = router({ catalog: cat(), store: ts.store.router });
    const first = await r.generate(base);
    expect(first.cached).toBe(false);
    const second = await r.generate({ ...base, messages: base.messages.map((m) => ({ ...m })), sampling: { ...base.sampling } });
    expect(second).toMatchObject({ cached: true, text: first.text, host: first.host, usage: first.usage });
    expect(fake.count('model-m')).toBe(1);
    const m = r.metrics();
    expect(m.hosts[0]).toMatchObject({ calls: 1, cacheHits: 1 });
    expect(m.recent.filter((c) => c.cacheHit)).toHaveLength(1);
    expect(m.recent.find((c) => c.cacheHit)!.costUsd).toBe(0);
    await r.close();
  });

  it('without a store, caches in an in-memory database of its own', async () => {
    const r = router({ catalog: cat() });
    expect((await r.generate(base)).cached).toBe(false);
    expect((await r.generate(base)).cached).toBe(true);
    expect(fake.count('model-m')).toBe(1);
    expect(r.metrics().hosts[0]).toMatchObject({ calls: 1, cacheHits: 1 });
    await r.close();
    // Nothing reached the data folder's store.
    expect(ts.store.router.recentCalls({ since: 0 }, 10)).toEqual([]);
  });

  const variants: Array<[string, Partial<ModelRequest>]> = [
    ['user message', { messages: [base.messages[0]!, { role: 'user', content: 'Is the sky green?' }] }],
    ['system message', { messages: [{ role: 'system', content: 'Be long.' }, base.messages[1]!] }],
    ['a role', { messages: [{ role: 'user', content: 'Be brief.' }, base.messages[1]!] }],
    ['temperature', { sampling: { ...base.sampling, temperature: 0.3 } }],
    ['top_p', { sampling: { ...base.sampling, topP: 0.8 } }],
    ['max tokens', { sampling: { ...base.sampling, maxTokens: 65 } }],
    ['seed', { sampling: { ...base.sampling, seed: 2 } }],
    ['stop', { sampling: { ...base.sampling, stop: ['STOP'] } }],
    ['an unset parameter', { sampling: { topP: 0.9, maxTokens: 64, seed: 1, stop: ['END'] } }],
    ['logical model', { model: 'other' }],
    ['privacy mode', { privacy: 'fallback' }],
    ['epoch', { epoch: 2 }],
  ];

  it.each(variants)('misses when the %s differs', async (_name, change) => {
    const r = router({ catalog: cat(), store: ts.store.router });
    await r.generate(base);
    const before = fake.count();
    const res = await r.generate({ ...base, ...change });
    expect(res.cached).toBe(false);
    expect(fake.count()).toBe(before + 1);
    const h = cat().hosts('m')[0]!;
    expect(promptCacheKey({ ...base, ...change }, change.privacy ?? 'strict', h)).not.toBe(promptCacheKey(base, 'strict', h));
    await r.close();
  });

  it('never serves an answer made under one privacy mode to another', async () => {
    const r = router({ catalog: cat(), store: ts.store.router });
    await r.generate(request('pub', 'q', { privacy: 'off' }));
    await r.generate(request('pub', 'q', { privacy: 'fallback' }));
    expect(fake.count('model-q')).toBe(2);
    // ...and strict refuses the unsafe host outright rather than reuse its answer.
    await expect(r.generate(request('pub', 'q', { privacy: 'strict' }))).rejects.toMatchObject({ code: 'privacy_blocked' });
    expect((await r.generate(request('pub', 'q', { privacy: 'off' }))).cached).toBe(true);
    await r.close();
  });

  it('the privacy lock is part of the key: a locked instance never reuses an unlocked answer', async () => {
    const unlocked = router({ catalog: cat(), store: ts.store.router });
    await unlocked.generate({ ...base, privacy: 'off' });
    await unlocked.close();
    const locked = router({ catalog: cat(), store: ts.store.router, privacyLock: 'strict' });
    expect((await locked.generate({ ...base, privacy: 'off' })).cached).toBe(false);
    await locked.close();
  });

  it('keeps epochs independent unless the run shares answers across epochs', async () => {
    const r = router({ catalog: cat(), store: ts.store.router });
    await r.generate({ ...base, epoch: 1 });
    expect((await r.generate({ ...base, epoch: 2 })).cached).toBe(false);
    await r.generate({ ...base, epoch: 1, shareCacheAcrossEpochs: true, messages: [{ role: 'user', content: 'shared' }] });
    const shared = await r.generate({ ...base, epoch: 3, shareCacheAcrossEpochs: true, messages: [{ role: 'user', content: 'shared' }] });
    expect(shared.cached).toBe(true);
    await r.close();
  });

  it('stores only successes', async () => {
    fake.next('model-m', { kind: 'status', status: 500 }, { kind: 'empty' });
    const r = router({ catalog: cat(), store: ts.store.router, maxCooldownWaitMs: 0, cooldowns: { errorBaseMs: 1 } });
    await expect(r.generate(base)).rejects.toMatchObject({ code: 'server_error' });
    await new Promise((res) => setTimeout(res, 5));
    await expect(r.generate(base)).rejects.toMatchObject({ code: 'empty_output' });
    await new Promise((res) => setTimeout(res, 5));
    const ok = await r.generate(base);
    expect(ok.cached).toBe(false);
    expect((await r.generate(base)).cached).toBe(true);
    expect(fake.count('model-m')).toBe(3);
    await r.close();
  });

  it('skipPromptCache neither reads nor writes the cache', async () => {
    const r = router({ catalog: cat(), store: ts.store.router });
    await r.generate(base);
    expect((await r.generate({ ...base, skipPromptCache: true })).cached).toBe(false);
    const fresh = { ...base, messages: [{ role: 'user' as const, content: 'never stored' }] };
    await r.generate({ ...fresh, skipPromptCache: true });
    r.flush();
    expect((ts.store.db.prepare('SELECT COUNT(*) AS n FROM prompt_cache').get() as { n: number }).n).toBe(1);
    expect((await r.generate(fresh)).cached).toBe(false);
    expect(fake.count('model-m')).toBe(4);
    await r.close();
  });

  it('expires entries after the TTL', async () => {
    const clock = manualClock();
    const r = router({ catalog: cat(), store: ts.store.router, now: clock.now, cache: { ttlMs: 60_000 } });
    await r.generate(base);
    clock.advance(59_000);
    expect((await r.generate(base)).cached).toBe(true);
    clock.advance(2_000);
    expect((await r.generate(base)).cached).toBe(false);
    await r.close();
  });

  it('answers from SQLite after a restart, and keeps no prompt text', async () => {
    const r1 = router({ catalog: cat(), store: ts.store.router });
    await r1.generate(base);
    await r1.close();
    const r2 = router({ catalog: cat(), store: ts.store.router });
    expect((await r2.generate(base)).cached).toBe(true);
    expect(fake.count('model-m')).toBe(1);
    await r2.close();
    const rows = ts.store.db.prepare('SELECT key, value FROM prompt_cache').all() as Array<{ key: string; value: string }>;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0]!.value).not.toContain('Is the sky blue?');
  });

  it('never answers a sample of a run with a sibling vignette of the same run and epoch', async () => {
    const r = router({ catalog: cat(), store: ts.store.router });
    const sample = (runId: string, vignetteId: string, epoch: number, share = false): ModelRequest => ({
      ...base,
      runId,
      vignette: { id: vignetteId },
      epoch,
      ...(share ? { shareCacheAcrossEpochs: true } : {}),
    });
    // Two vignettes of one run with the same prompt, in one epoch: both go to the model.
    expect((await r.generate(sample('run-a', 'q1', 1))).cached).toBe(false);
    expect((await r.generate(sample('run-a', 'q1-copy', 1))).cached).toBe(false);
    expect(fake.count('model-m')).toBe(2);
    // The same sample again (a job redelivered after a crash) is served.
    expect((await r.generate(sample('run-a', 'q1-copy', 1))).cached).toBe(true);
    // A later run is served from the earlier one.
    expect((await r.generate(sample('run-b', 'q1', 1))).cached).toBe(true);
    // Epochs that share answers: another epoch of the same run is served, a sibling in the same epoch is not.
    expect((await r.generate(sample('run-c', 'q1', 1, true))).cached).toBe(false);
    expect((await r.generate(sample('run-c', 'q2', 2, true))).cached).toBe(true);
    expect((await r.generate(sample('run-c', 'q1-copy', 1, true))).cached).toBe(false);
    expect(fake.count('model-m')).toBe(4);
    await r.close();
  });
});

describe('the prompt cache answers only for the same instrument', () => {
  /** A catalog whose model `m` is hosted as given, on providers p and p2 (p2 another fake server unless given). */
  function hosted(hosts: Array<Record<string, unknown>>, providers: Record<string, Record<string, unknown>> = {}) {
    return catalog({ providers: { p: openaiProvider(fake.url), ...providers }, models: { m: { hosts } } });
  }

  /** Answers `base` with one catalog, then again, from the same SQLite file, with another: was it cached? */
  async function servedAfter(before: ReturnType<typeof hosted>, after: ReturnType<typeof hosted>) {
    const r1 = router({ catalog: before, store: ts.store.router });
    const first = await r1.generate(base);
    await r1.close();
    const r2 = router({ catalog: after, store: ts.store.router });
    const second = await r2.generate(base);
    await r2.close();
    return { first, second };
  }

  it('misses when the logical model moves to another host model', async () => {
    fake.always('model-m', { kind: 'ok', text: 'old host says yes' }).always('model-m2', { kind: 'ok', text: 'new host says no' });
    const { first, second } = await servedAfter(hosted([host('p', 'model-m')]), hosted([host('p', 'model-m2')]));
    expect(first.text).toBe('old host says yes');
    expect(second).toMatchObject({ cached: false, text: 'new host says no', host: 'p/model-m2' });
    expect(fake.count('model-m2')).toBe(1);
  });

  it('misses when the same model id moves to another endpoint or provider kind', async () => {
    const other = await new FakeProvider().start();
    try {
      const moved = await servedAfter(hosted([host('p', 'model-m')]), hosted([host('p2', 'model-m')], { p2: openaiProvider(other.url) }));
      expect(moved.second).toMatchObject({ cached: false, host: 'p2/model-m' });
      expect(other.count('model-m')).toBe(1);
      // The same endpoint spoken to as another kind (the plain generate protocol) is another instrument too.
      const kind = await servedAfter(hosted([host('p', 'model-m')]), hosted([host('g', 'model-m')], { g: { kind: 'generate', baseUrl: fake.url, trainsOnData: false } }));
      expect(kind.second.cached).toBe(false);
    } finally {
      await other.stop();
    }
  });

  it('misses when an option that changes answers changes: provider options, or the output cap a run without max tokens gets', async () => {
    const options = await servedAfter(hosted([host('p', 'model-m')]), hosted([host('p', 'model-m')], { p: openaiProvider(fake.url, { options: { maxTokensField: 'max_completion_tokens' } }) }));
    expect(options.second.cached).toBe(false);
    const uncapped = { ...base, sampling: { temperature: 0 } };
    const r1 = router({ catalog: hosted([host('p', 'model-m')]), store: ts.store.router });
    await r1.generate(uncapped);
    await r1.close();
    const r2 = router({ catalog: hosted([host('p', 'model-m')], { p: openaiProvider(fake.url, { maxOutputTokens: 256 }) }), store: ts.store.router });
    expect((await r2.generate(uncapped)).cached).toBe(false);
    expect(fake.arrivals.at(-1)!.body.max_tokens).toBe(256);
    await r2.close();
  });

  it('hits when nothing that shapes answers changed: limits, timeouts, prices, a note, a new failover host, the host order', async () => {
    const other = await new FakeProvider().start();
    try {
      const p2 = { p2: openaiProvider(other.url) };
      const edited = hosted([host('p', 'model-m', { inputPerMTok: 9, contextWindow: 64000 }), host('p2', 'model-x')], {
        p: openaiProvider(fake.url, { rpm: 7, maxConcurrency: 2, timeoutMs: 9000, note: 'checked today', dailyBudget: { calls: 99 } }),
        ...p2,
      });
      const { first, second } = await servedAfter(hosted([host('p', 'model-m')]), edited);
      expect(second).toMatchObject({ cached: true, text: first.text, host: 'p/model-m' });
      // The failover host now listed first: the first host's answer is still an answer of model m.
      const reordered = router({ catalog: hosted([host('p2', 'model-x'), host('p', 'model-m')], p2), store: ts.store.router });
      expect(await reordered.generate(base)).toMatchObject({ cached: true, host: 'p/model-m' });
      await reordered.close();
      // Without the host that answered, nothing of it is served.
      const without = router({ catalog: hosted([host('p2', 'model-x')], p2), store: ts.store.router });
      expect(await without.generate(base)).toMatchObject({ cached: false, host: 'p2/model-x' });
      await without.close();
      expect(fake.count('model-m')).toBe(1);
      expect(other.count('model-x')).toBe(1);
    } finally {
      await other.stop();
    }
  });

  it('serves no strict call from a host since marked as one that trains on prompts', async () => {
    const other = await new FakeProvider().start();
    try {
      const { second } = await servedAfter(
        hosted([host('p', 'model-m')]),
        hosted([host('p', 'model-m', { trainsOnData: true }), host('p2', 'model-m')], { p2: openaiProvider(other.url) }),
      );
      expect(second).toMatchObject({ cached: false, host: 'p2/model-m' });
      expect(other.count('model-m')).toBe(1);
    } finally {
      await other.stop();
    }
  });
});
