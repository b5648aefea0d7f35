/**
 * The gguf provider on a real model file (a tiny random-weight Llama 2, see
 * ../shared/models/README.md): it loads with node-llama-cpp on the CPU and answers through the
 * router with real token counts from llama.cpp's own tokenizer and meter; it sends exactly the
 * request's messages (no hidden system prompt), ends a call that never stops by its timeout,
 * stops generating when cancelled, and picks its threads from the machine.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider, ResolvedHost } from '../../core/models/catalog.js';
import type { ModelRequest } from '../../core/models/model-client.js';
import { defaultGgufThreads, GgufHostClient } from '../../core/models/providers/gguf.js';
import { catalog, request, router, tempStore } from './helpers.js';

const MODEL = resolve('../shared/models/llama-2-tiny-random.gguf');
const ts = tempStore();
afterAll(() => ts.cleanup());

type Lib = typeof import('node-llama-cpp');
let lib: Lib;
let llama: Awaited<ReturnType<Lib['getLlama']>>;
let model: Awaited<ReturnType<typeof llama.loadModel>>;

function ggufHost(provider: Provider): ResolvedHost {
  return { provider: 'local', model: MODEL, contextWindow: 512, id: `local/${MODEL}`, providerConfig: provider, privacySafe: true };
}

function localCatalog(provider: Record<string, unknown> = {}) {
  return catalog({
    providers: { local: { kind: 'gguf', trainsOnData: false, ...provider } },
    models: { tiny: { hosts: [{ provider: 'local', model: MODEL, contextWindow: 512, inputPerMTok: 0, outputPerMTok: 0 }] } },
  });
}

describe.skipIf(!existsSync(MODEL))('gguf provider', () => {
  beforeAll(async () => {
    lib = await import('node-llama-cpp');
    llama = await lib.getLlama({ gpu: false, build: 'never', logLevel: lib.LlamaLogLevel.error });
    model = await llama.loadModel({ modelPath: MODEL });
  });
  afterAll(async () => {
    await model?.dispose();
    await llama?.dispose();
  });

  it('answers with real token counts', async () => {
    const r = router({ catalog: localCatalog(), store: ts.store.router, cache: { enabled: false } });
    const promptTokens = model.tokenize('Hello, how are you today?').length;
    const res = await r.generate(
      request('tiny', 'Hello, how are you today?', { sampling: { maxTokens: 12, temperature: 0, seed: 1 } }),
    );
    expect(res.host).toBe(`local/${MODEL}`);
    expect(res.text.length).toBeGreaterThan(0);
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

  it('sends exactly the vignette: no hidden system prompt is added or counted', async () => {
    const r = router({ catalog: localCatalog(), store: ts.store.router, cache: { enabled: false } });
    const prompt = 'What is the capital of France?';
    const bare = await r.generate(request('tiny', prompt, { sampling: { maxTokens: 4, temperature: 0 } }));
    // The prompt in its chat template's few markers and nothing else (node-llama-cpp's default
    // system prompt alone is about 70 tokens).
    const promptTokens = model.tokenize(prompt).length;
    expect(bare.usage.inputTokens).toBeGreaterThanOrEqual(promptTokens);
    expect(bare.usage.inputTokens).toBeLessThan(promptTokens + 16);

    // A vignette's own system text is sent, and counted, as written: its tokens and a marker or two more.
    const system = 'Answer in one word, the name of the city and nothing else.';
    const withSystem = await r.generate({
      ...request('tiny', prompt, { sampling: { maxTokens: 4, temperature: 0 } }),
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: prompt },
      ],
    });
    const added = withSystem.usage.inputTokens - bare.usage.inputTokens;
    expect(added).toBeGreaterThanOrEqual(model.tokenize(system).length);
    expect(added).toBeLessThan(model.tokenize(system).length + 16);
    await r.close();
  }, 120_000);

  it('ends a call with no output cap by its timeout, and answers the next call', async () => {
    // Straight to the provider: the router would set an output cap; the provider alone must still stop.
    const provider: Provider = { kind: 'gguf', trainsOnData: false, timeoutMs: 1500 };
    const client = new GgufHostClient('local', provider);
    const host = ggufHost(provider);
    const call: ModelRequest = { ...request('tiny', 'Tell me a long story.'), sampling: { temperature: 1 } };
    await client.call(host, { ...call, sampling: { maxTokens: 2 } }); // load the model first
    const started = performance.now();
    await expect(client.call(host, call)).rejects.toMatchObject({ code: 'timeout', retryable: true });
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(1400);
    expect(took).toBeLessThan(15_000); // the timeout, not for ever (a loaded machine stretches the last token)
    const next = await client.call(host, { ...call, sampling: { maxTokens: 4 } });
    expect(next.usage.outputTokens).toBeGreaterThan(0);
    await client.close();
  }, 120_000);

  it('stops generating when the caller cancels', async () => {
    const provider: Provider = { kind: 'gguf', trainsOnData: false, timeoutMs: 120_000 };
    const client = new GgufHostClient('local', provider);
    const host = ggufHost(provider);
    await client.call(host, { ...request('tiny'), sampling: { maxTokens: 2 } });
    const ac = new AbortController();
    const pending = client.call(host, { ...request('tiny', 'Go on for ever.'), sampling: {}, signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    const started = performance.now();
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
    expect(performance.now() - started).toBeLessThan(15_000);
    // The model's turn was released: the next call runs.
    const next = await client.call(host, { ...request('tiny'), sampling: { maxTokens: 3 } });
    expect(next.usage.outputTokens).toBeGreaterThan(0);
    await client.close();
  }, 120_000);

  it('chooses its threads from the machine, as fast as one thread here', async () => {
    expect(defaultGgufThreads(1)).toBe(1);
    expect(defaultGgufThreads(2)).toBe(1);
    expect(defaultGgufThreads(8)).toBe(7);
    const auto = new GgufHostClient('local', { kind: 'gguf', trainsOnData: false });
    const one = new GgufHostClient('local', { kind: 'gguf', trainsOnData: false, options: { threads: 1 } });
    expect(await auto.threads()).toBe(defaultGgufThreads(llama.cpuMathCores));
    expect(await one.threads()).toBe(1);
    const host = ggufHost({ kind: 'gguf', trainsOnData: false });
    const call = { ...request('tiny', 'What is the capital of France?'), sampling: { maxTokens: 16, temperature: 0 } };
    await auto.call(host, call);
    await one.call(host, call);
    // Interleaved, so that the machine's other load falls on both alike.
    let autoMs = 0;
    let oneMs = 0;
    for (let i = 0; i < 6; i++) {
      autoMs += (await auto.call(host, call)).latencyMs;
      oneMs += (await one.call(host, call)).latencyMs;
    }
    expect(autoMs).toBeLessThan(oneMs * 2);
    await auto.close();
    await one.close();
  }, 120_000);

  it('reports a missing model file as a host without the model', async () => {
    const cat = catalog({
      providers: { local: { kind: 'gguf', trainsOnData: false } },
      models: { gone: { hosts: [{ provider: 'local', model: 'no/such/model.gguf', contextWindow: 512 }] } },
    });
    const r = router({ catalog: cat, store: ts.store.router, cache: { enabled: false } });
    await expect(r.generate(request('gone'))).rejects.toMatchObject({ code: 'bad_request', message: /no model file/ });
    expect(r.posture().models[0]!.hosts[0]!.state).toBe('blacklisted');
    await r.close();
  });
});
