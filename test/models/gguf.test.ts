/**
 * The gguf provider on a real model file (a tiny random-weight Llama 2, see
 * ../shared/models/README.md): it runs in a process of its own and answers through the router with
 * real token counts from llama.cpp's own tokenizer and meter; it sends exactly the request's
 * messages (no hidden system prompt); it never lets a generation outgrow its window (the cap is
 * the window minus the prompt, finish reason `length`, and a prompt that leaves no room is refused
 * before anything is evaluated); a call ends by its timeout or its cancellation even while the
 * model's native code is busy (the model's process is killed), and the next call is answered; it
 * picks its threads from the machine.
 * The model's process is never this test's worker: nothing the model does can block vitest.
 * Runs on: Node (tests).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider, ResolvedHost } from '../../core/models/catalog.js';
import { STOP_GRACE_MS } from '../../core/models/providers/gguf-process.js';
import { defaultGgufThreads, GgufHostClient } from '../../core/models/providers/gguf.js';
import { GGUF_SKIP, ggufSuite, MODEL, modelProcessesOf } from './gguf-model.js';
import { catalog, request, router, tempStore } from './helpers.js';

const ts = tempStore();
afterAll(() => ts.cleanup());

type Lib = typeof import('node-llama-cpp');
let llama: Awaited<ReturnType<Lib['getLlama']>>;
let model: Awaited<ReturnType<typeof llama.loadModel>>;

/**
 * A prompt whose tokenizing alone keeps the model's process busy in native code for well over the
 * call's timeout. 800,000 words was tokenized in under 3 s on a quiet machine (the call then ended
 * `too_long`, not by its timeout), so it is ten times that.
 */
const BUSY_PROMPT = 'word '.repeat(8_000_000);

function ggufHost(provider: Provider, contextWindow = 512): ResolvedHost {
  return { provider: 'local', model: MODEL, contextWindow, id: `local/${MODEL}`, providerConfig: provider, privacySafe: true };
}

function localCatalog(contextWindow = 512) {
  return catalog({
    providers: { local: { kind: 'gguf', trainsOnData: false } },
    models: { tiny: { hosts: [{ provider: 'local', model: MODEL, contextWindow, inputPerMTok: 0, outputPerMTok: 0 }] } },
  });
}

/** The model processes this test process has running now. */
function modelProcesses(): number[] {
  return modelProcessesOf(process.pid);
}

async function loaded(client: GgufHostClient, host: ResolvedHost): Promise<void> {
  await client.call(host, { ...request('tiny'), sampling: { maxTokens: 2, temperature: 0 } });
}

describe.skipIf(GGUF_SKIP !== undefined)(ggufSuite('gguf provider'), () => {
  beforeAll(async () => {
    // Only to count tokens as the model does; every generation runs in the provider's own process.
    const lib = await import('node-llama-cpp');
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
    expect(modelProcesses()).toEqual([]);
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

  it('answers a request for 4,000 tokens from a 256-token window up to the window, finish reason length', async () => {
    const r = router({ catalog: localCatalog(256), store: ts.store.router, cache: { enabled: false } });
    await r.generate(request('tiny', 'Hello.', { sampling: { maxTokens: 2 } })); // the model loaded
    // How long the call holds this thread at a stretch (printed: the guarantee is measured, not timed here).
    const hold = monitorEventLoopDelay({ resolution: 5 });
    hold.enable();
    const res = await r.generate(request('tiny', 'Tell me a long story.', { sampling: { maxTokens: 4000, temperature: 0 } }));
    hold.disable();
    process.stdout.write(`gguf: a 4,000-token call held the event loop at most ${(hold.max / 1e6).toFixed(1)} ms (p99 ${(hold.percentile(99) / 1e6).toFixed(1)} ms)\n`);
    expect(res.finishReason).toBe('length');
    expect(res.usage.inputTokens + res.usage.outputTokens).toBeLessThan(256);
    // Cut at the window, not earlier: all the room the prompt left, but the one token kept free.
    expect(res.usage.outputTokens).toBeGreaterThan(256 - res.usage.inputTokens - 8);
    await r.close();
  }, 120_000);

  it('refuses a prompt that leaves no room in the window before evaluating it, and answers the next call', async () => {
    const provider: Provider = { kind: 'gguf', trainsOnData: false };
    const client = new GgufHostClient('local', provider);
    const host = ggufHost(provider, 256);
    const long = 'word '.repeat(400);
    await expect(client.call(host, { ...request('tiny', long), sampling: { maxTokens: 10 } })).rejects.toMatchObject({
      code: 'bad_request',
      status: 413,
      retryable: false,
      message: expect.stringMatching(/the prompt needs \d+ tokens, the context window is 256$/) as unknown,
    });
    const next = await client.call(host, { ...request('tiny'), sampling: { maxTokens: 3 } });
    expect(next.usage.outputTokens).toBeGreaterThan(0);
    await client.close();
  }, 120_000);

  it('ends a call by its timeout while the model is busy in native code, kills the model process, and answers the next call', async () => {
    // Long enough for a short answer from a freshly loaded model on a loaded machine.
    const timeoutMs = 3000;
    const provider: Provider = { kind: 'gguf', trainsOnData: false, timeoutMs };
    const client = new GgufHostClient('local', provider);
    const host = ggufHost(provider, 4096);
    await loaded(client, host);
    const [busy] = modelProcesses();
    expect(busy).toBeDefined();
    const started = performance.now();
    await expect(client.call(host, { ...request('tiny', BUSY_PROMPT), sampling: {} })).rejects.toMatchObject({ code: 'timeout', retryable: true });
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(timeoutMs - 100);
    // The deadline and a second (a loaded machine adds its delay): not the native code's ~20 s.
    expect(took).toBeLessThan(timeoutMs + 1000 + 3000);
    await expect.poll(() => modelProcesses().includes(busy!), { timeout: STOP_GRACE_MS + 5000 }).toBe(false);
    const next = await client.call(host, { ...request('tiny'), sampling: { maxTokens: 4 } });
    expect(next.usage.outputTokens).toBeGreaterThan(0);
    await client.close();
    expect(modelProcesses()).toEqual([]);
  }, 120_000);

  it('stops generating between two tokens when the caller cancels, and its process goes on', async () => {
    const provider: Provider = { kind: 'gguf', trainsOnData: false, timeoutMs: 120_000 };
    const client = new GgufHostClient('local', provider);
    const host = ggufHost(provider, 4096);
    await loaded(client, host);
    const before = modelProcesses();
    const ac = new AbortController();
    // No cap: the whole window's room, about 4,000 tokens, seconds of generating.
    const pending = client.call(host, { ...request('tiny', 'Go on for ever.'), sampling: {}, signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
    // The model's turn was released and its process kept: the next call runs on it.
    const next = await client.call(host, { ...request('tiny'), sampling: { maxTokens: 3 } });
    expect(next.usage.outputTokens).toBeGreaterThan(0);
    expect(modelProcesses()).toEqual(before);
    await client.close();
  }, 120_000);

  it('ends a cancelled call at once while the model is busy in native code', async () => {
    const provider: Provider = { kind: 'gguf', trainsOnData: false, timeoutMs: 120_000 };
    const client = new GgufHostClient('local', provider);
    const host = ggufHost(provider, 4096);
    await loaded(client, host);
    const ac = new AbortController();
    const pending = client.call(host, { ...request('tiny', BUSY_PROMPT), sampling: {}, signal: ac.signal });
    setTimeout(() => ac.abort(), 500);
    const started = performance.now();
    await expect(pending).rejects.toMatchObject({ code: 'cancelled' });
    expect(performance.now() - started).toBeLessThan(500 + 1000 + 3000);
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
    const host = ggufHost({ kind: 'gguf', trainsOnData: false });
    expect(await auto.threadsOf(host)).toBe(defaultGgufThreads(llama.cpuMathCores));
    expect(await one.threadsOf(host)).toBe(1);
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
