/**
 * Context windows: a host whose window cannot hold the prompt plus the most it may write is
 * skipped (it never sees the call), and when no host can hold it the error says so.
 * Runs on: Node (tests).
 */
import { describe, expect, it } from 'vitest';
import { PanoptesError } from '../../core/domain.js';
import { estimatePromptTokens, promptTokenBound } from '../../core/models/router/token-estimate.js';
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
    providers: { small: openaiProvider(fake.url), big: openaiProvider(fake.url) },
    models: {
      m: { hosts: [host('small', 'small-ctx', { contextWindow: 1000 }), host('big', 'big-ctx', { contextWindow: 32000 })] },
      tiny: { hosts: [host('small', 'tiny-ctx', { contextWindow: 200 })] },
    },
  });
}

// About 2,000 tokens of English.
const longPrompt = 'The patient reports intermittent chest pain after exercise, relieved by rest. '.repeat(150);

describe('context window', () => {
  it('skips a host too small for the prompt', async () => {
    const r = router({ catalog: cat(), store: ts.store.router, cache: { enabled: false } });
    for (let i = 0; i < 4; i++) expect((await r.generate(request('m', `${i} ${longPrompt}`))).host).toBe('big/big-ctx');
    expect(fake.count('small-ctx')).toBe(0);
    // A short prompt fits both, and rotation uses both.
    const hosts = new Set<string>();
    for (let i = 0; i < 4; i++) hosts.add((await r.generate(request('m', `short ${i}`))).host);
    expect(hosts).toEqual(new Set(['small/small-ctx', 'big/big-ctx']));
    await r.close();
  });

  it('counts the maximum output against the window too', async () => {
    const r = router({ catalog: cat(), store: ts.store.router, cache: { enabled: false } });
    for (let i = 0; i < 3; i++) {
      expect((await r.generate(request('m', `short ${i}`, { sampling: { maxTokens: 2000 } }))).host).toBe('big/big-ctx');
    }
    expect(fake.count('small-ctx')).toBe(0);
    await r.close();
  });

  it("says so when no host can hold the prompt: the call's own failure, not the job's", async () => {
    const r = router({ catalog: cat(), store: ts.store.router, cache: { enabled: false } });
    const need = await estimatePromptTokens([{ role: 'user', content: longPrompt }]);
    const err = await r.generate(request('tiny', longPrompt)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PanoptesError);
    // Not `no_host`: that fails the whole job; this vignette alone is too long.
    expect((err as PanoptesError).code).toBe('bad_request');
    expect((err as PanoptesError).retryable).toBe(false);
    expect((err as PanoptesError).message).toBe(`fits no host of tiny: needs ~${need.toLocaleString('en-US')} tokens, the largest window is 200`);
    // With two hosts, the largest window is named.
    const both = await r.generate(request('m', longPrompt.repeat(20))).catch((e: unknown) => e);
    expect((both as PanoptesError).message).toMatch(/^fits no host of m: needs ~[\d,]+ tokens, the largest window is 32,000$/);
    expect(fake.count('tiny-ctx')).toBe(0);
    await r.close();
  });

  it('estimates with a real tokenizer and a margin, and the free bound never undercounts', async () => {
    const messages = [{ role: 'user' as const, content: longPrompt }];
    const estimate = await estimatePromptTokens(messages);
    expect(estimate).toBeGreaterThan(1500);
    expect(estimate).toBeLessThan(3000);
    expect(promptTokenBound(messages)).toBeGreaterThanOrEqual(estimate);
  });
});
