/**
 * Reasoning settings on the wire: `reasoningEffort` reaches an OpenAI-compatible server as
 * `reasoning_effort`, `thinkingBudget` reaches Anthropic as `thinking.budget_tokens` (with
 * `max_tokens` room above it), reasoning tokens are counted apart, the settings are part of the
 * prompt cache key, and a run asking for them is refused for a host that does not take them.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider, ResolvedHost } from '../../core/models/catalog.js';
import { AnthropicHostClient } from '../../core/models/providers/anthropic.js';
import { OpenAIHostClient } from '../../core/models/providers/openai.js';
import { promptCacheKey } from '../../core/models/router/prompt-cache.js';
import { useTempEngines } from '../helpers/temp-engine.js';
import { writeManifest } from '../helpers/temp.js';
import { FakeProvider } from './fake-provider.js';
import { catalog, host, openaiProvider, request, router } from './helpers.js';

let fake: FakeProvider;
beforeAll(async () => {
  fake = await new FakeProvider().start();
});
afterAll(async () => {
  await fake.stop();
});

function hostOf(provider: Provider, model: string): ResolvedHost {
  return { provider: 'p', model, contextWindow: 200000, id: `p/${model}`, providerConfig: provider, privacySafe: true };
}

describe('reasoning settings on the wire', () => {
  it('sends reasoning_effort to an OpenAI-compatible host and counts its reasoning tokens apart', async () => {
    fake.next('o-reason', { kind: 'ok', text: 'four', inputTokens: 10, outputTokens: 40, reasoningTokens: 32 });
    const r = router({
      catalog: catalog({ providers: { oa: openaiProvider(fake.url) }, models: { m: { hosts: [host('oa', 'o-reason')] } } }),
      env: {},
    });
    try {
      const res = await r.generate(request('m', 'What is 2 + 2?', { sampling: { reasoningEffort: 'high', maxTokens: 500 } }));
      expect(res.usage).toEqual({ inputTokens: 10, outputTokens: 40, reasoningTokens: 32 });
      const sent = fake.arrivals.filter((a) => a.model === 'o-reason').at(-1)!;
      expect(sent.body).toMatchObject({ reasoning_effort: 'high', max_tokens: 500 });
      expect(sent.body).not.toHaveProperty('thinking');
    } finally {
      await r.close();
    }
  });

  it('sends no reasoning_effort when none is set', async () => {
    const provider: Provider = { kind: 'openai', baseUrl: `${fake.url}/v1`, trainsOnData: false, timeoutMs: 2000 };
    await new OpenAIHostClient('p', provider, 'sk-test-key-123456').call(hostOf(provider, 'o-plain'), request('o-plain'));
    expect(fake.arrivals.filter((a) => a.model === 'o-plain').at(-1)!.body).not.toHaveProperty('reasoning_effort');
  });

  it('sends thinking.budget_tokens to Anthropic, with max_tokens above the budget', async () => {
    const provider: Provider = { kind: 'anthropic', baseUrl: fake.url, trainsOnData: false, timeoutMs: 2000 };
    const client = new AnthropicHostClient('p', provider, 'sk-ant-test-key-123456');
    await client.call(hostOf(provider, 'claude-think'), request('claude-think', 'Prove it.', { sampling: { thinkingBudget: 2048, maxTokens: 1000 } }));
    const sent = fake.arrivals.filter((a) => a.model === 'claude-think').at(-1)!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 3048 });
    expect(sent.body).not.toHaveProperty('reasoning_effort');
  });
});

describe('reasoning settings in the prompt cache key', () => {
  it('an answer given with one effort or budget never answers another', () => {
    const answeredBy = hostOf({ kind: 'openai', baseUrl: fake.url, trainsOnData: false, timeoutMs: 2000 }, 'o-key');
    const key = (sampling: Record<string, unknown>) => promptCacheKey(request('m', 'q', { sampling }), 'strict', answeredBy);
    const keys = [key({}), key({ reasoningEffort: 'low' }), key({ reasoningEffort: 'high' }), key({ thinkingBudget: 2048 }), key({ thinkingBudget: 4096 })];
    expect(new Set(keys).size).toBe(keys.length);
    expect(key({ reasoningEffort: 'low' })).toBe(key({ reasoningEffort: 'low' }));
  });

  it('the router answers the same prompt again from the cache only with the same setting', async () => {
    fake.always('o-cache', { kind: 'ok', text: 'cached?' });
    const r = router({ catalog: catalog({ providers: { oa: openaiProvider(fake.url) }, models: { m: { hosts: [host('oa', 'o-cache')] } } }) });
    try {
      const before = fake.count('o-cache');
      await r.generate(request('m', 'same', { sampling: { reasoningEffort: 'low' } }));
      expect((await r.generate(request('m', 'same', { sampling: { reasoningEffort: 'low' } }))).cached).toBe(true);
      expect((await r.generate(request('m', 'same', { sampling: { reasoningEffort: 'medium' } }))).cached).toBe(false);
      expect(fake.count('o-cache') - before).toBe(2);
    } finally {
      await r.close();
    }
  });
});

describe('a run asking for reasoning settings', () => {
  const engines = useTempEngines('panoptes-reasoning-');

  function openWithCatalog() {
    const file = join(engines.dir, 'catalog.json');
    writeFileSync(file, JSON.stringify({
      providers: {
        thinks: { kind: 'mock', trainsOnData: false },
        plain: { kind: 'mock', trainsOnData: false, takesReasoning: false },
      },
      models: {
        thinker: { hosts: [{ provider: 'thinks', model: 'thinker', contextWindow: 8000 }] },
        mixed: { hosts: [{ provider: 'thinks', model: 'a', contextWindow: 8000 }, { provider: 'plain', model: 'b', contextWindow: 8000 }] },
        excepted: { hosts: [{ provider: 'plain', model: 'c', contextWindow: 8000, takesReasoning: true }] },
      },
    }));
    return engines.open({ catalogPaths: [file] });
  }

  it('is refused for a host whose catalog entry says it does not take them, and nothing is stored', async () => {
    const engine = openWithCatalog();
    const manifestPath = writeManifest(engines.dir, 2);
    const err = await engine.service
      .createRun({ manifestPath, models: ['thinker', 'mixed'], epochs: 1, sampling: { reasoningEffort: 'low' } })
      .catch((e: unknown) => e as Error);
    expect((err as Error).message).toBe('models[1]: host plain/b of "mixed" takes no reasoning settings (its catalog entry says takesReasoning: false); drop reasoningEffort and thinkingBudget for it');
    expect(await engine.service.listRuns({})).toHaveLength(0);
    // Without the settings the same models are fine; a host may override its provider.
    await expect(engine.service.createRun({ manifestPath, models: ['thinker', 'mixed'], epochs: 1 })).resolves.toBeTruthy();
    await expect(engine.service.createRun({ manifestPath, models: ['excepted'], epochs: 1, sampling: { thinkingBudget: 2048 } })).resolves.toBeTruthy();
  });

  it('refuses an effort that is not low, medium or high, and a budget under 1,024, by field', async () => {
    const engine = openWithCatalog();
    const manifestPath = writeManifest(engines.dir, 1);
    await expect(engine.service.createRun({ manifestPath, models: ['thinker'], epochs: 1, sampling: { reasoningEffort: 'max' as 'low' } })).rejects.toThrow(/sampling\.reasoningEffort/);
    await expect(engine.service.createRun({ manifestPath, models: ['thinker'], epochs: 1, sampling: { thinkingBudget: 100 } })).rejects.toThrow(/sampling\.thinkingBudget/);
  });
});
