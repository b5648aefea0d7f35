/**
 * The gguf provider on a real model file (a tiny random-weight Llama 2, see
 * ../shared/models/README.md): it loads with node-llama-cpp on the CPU and answers through the
 * router with real token counts from llama.cpp's own tokenizer and meter.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { catalog, request, router, tempStore } from './helpers.js';

const MODEL = resolve('../shared/models/llama-2-tiny-random.gguf');
const ts = tempStore();
afterAll(() => ts.cleanup());

describe.skipIf(!existsSync(MODEL))('gguf provider', () => {
  it('answers with real token counts', async () => {
    const cat = catalog({
      providers: { local: { kind: 'gguf', trainsOnData: false, options: { threads: 2 } } },
      models: { tiny: { hosts: [{ provider: 'local', model: MODEL, contextWindow: 512, inputPerMTok: 0, outputPerMTok: 0 }] } },
    });
    const r = router({ catalog: cat, store: ts.store, cache: { enabled: false } });
    const { getLlama } = await import('node-llama-cpp');
    const llama = await getLlama({ gpu: false, build: 'never' });
    const model = await llama.loadModel({ modelPath: MODEL });
    const promptTokens = model.tokenize('Hello, how are you today?').length;
    await model.dispose();
    await llama.dispose();

    const res = await r.generate(
      request('tiny', 'Hello, how are you today?', { sampling: { maxTokens: 12, temperature: 0, seed: 1 } }),
    );
    expect(res.host).toBe(`local/${MODEL}`);
    expect(res.text.length).toBeGreaterThan(0);
    // Input is the prompt inside the chat template: at least the prompt's own tokens.
    expect(res.usage.inputTokens).toBeGreaterThanOrEqual(promptTokens);
    expect(res.usage.outputTokens).toBeGreaterThan(0);
    expect(res.usage.outputTokens).toBeLessThanOrEqual(12);

    // Each call starts from an empty context: the same request costs the same input again.
    const again = await r.generate(
      request('tiny', 'Hello, how are you today?', { sampling: { maxTokens: 12, temperature: 0, seed: 1 } }),
    );
    expect(again.usage.inputTokens).toBe(res.usage.inputTokens);
    expect(again.text).toBe(res.text);
    const m = r.metrics({ model: 'tiny' });
    expect(m.hosts[0]).toMatchObject({ calls: 2, inputTokens: res.usage.inputTokens * 2 });
    await r.close();
  }, 120_000);

  it('reports a missing model file as a host without the model', async () => {
    const cat = catalog({
      providers: { local: { kind: 'gguf', trainsOnData: false } },
      models: { gone: { hosts: [{ provider: 'local', model: 'no/such/model.gguf', contextWindow: 512 }] } },
    });
    const r = router({ catalog: cat, store: ts.store, cache: { enabled: false } });
    await expect(r.generate(request('gone'))).rejects.toMatchObject({ code: 'bad_request', message: /no model file/ });
    expect(r.posture().models[0]!.hosts[0]!.state).toBe('blacklisted');
    await r.close();
  });
});
