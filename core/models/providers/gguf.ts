/**
 * The `gguf` provider: a local GGUF model file run in this process with node-llama-cpp, so a model
 * on disk can be evaluated with no server and no key. node-llama-cpp is an optional dependency,
 * imported only when a gguf host is first called; it runs on the CPU with its prebuilt binaries
 * (never a source build). A host's `model` is the file's path (relative to the provider option
 * `modelsDir`, else to the working directory); its `contextWindow` is the context size used. Each
 * model answers one call at a time on its own context sequence, cleared between calls, and token
 * counts are the sequence's own meter: the tokens really evaluated and really generated.
 * The conversation is exactly the request's messages: node-llama-cpp's chat session would add its
 * own default system prompt (about 70 tokens, counted as input) to a vignette without one.
 * A call ends by the provider's `timeoutMs` (the router always sets an output cap too; a random
 * model never emits its end token and would shift its context for ever), and cancellation aborts
 * the generation between two tokens.
 * Provider options:
 *   modelsDir   folder for relative model paths
 *   threads     CPU threads for inference (default: the machine's math cores minus one for the
 *               engine's own event loop, at least 1; node-llama-cpp's own default, 4, took 200x
 *               longer per call on a 2-core machine)
 * Runs on: Node (core).
 */
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { ChatHistoryItem, Llama, LlamaContext, LlamaContextSequence, LlamaModel } from 'node-llama-cpp';
import { z } from 'zod';
import { PanoptesError } from '../../domain.js';
import { Semaphore } from '../../concurrency/semaphore.js';
import type { Provider, ResolvedHost } from '../catalog.js';
import type { ModelRequest } from '../model-client.js';
import { callSignal } from './call-signal.js';
import { failureFromNetwork, ProviderFailure } from './failures.js';
import type { HostClient, HostResponse } from './host-client.js';
import { DEFAULT_TIMEOUT_MS } from './openai.js';
import { parseProviderOptions } from './options.js';

export const GgufOptionsSchema = z
  .object({ modelsDir: z.string().optional(), threads: z.number().int().positive().optional() })
  .strict();

type NodeLlamaCpp = typeof import('node-llama-cpp');

/**
 * Inference threads when the catalog sets none: every core llama.cpp finds useful for math but
 * one, which the engine's event loop (records, events, the UI) needs to stay responsive.
 */
export function defaultGgufThreads(cpuMathCores: number): number {
  return Math.max(1, cpuMathCores - 1);
}

interface LoadedModel {
  model: LlamaModel;
  context: LlamaContext;
  sequence: LlamaContextSequence;
  /** One call at a time per model: its single sequence holds one conversation. */
  turn: Semaphore;
}

async function importNodeLlamaCpp(): Promise<NodeLlamaCpp> {
  try {
    return await import('node-llama-cpp');
  } catch (err) {
    throw new PanoptesError(
      'invalid_input',
      'the gguf provider needs the optional dependency node-llama-cpp (npm install node-llama-cpp@3.21.1)',
      { cause: err },
    );
  }
}

export class GgufHostClient implements HostClient {
  private readonly opts: z.output<typeof GgufOptionsSchema>;
  private llama: Promise<{ lib: NodeLlamaCpp; llama: Llama }> | undefined;
  private readonly models = new Map<string, Promise<LoadedModel>>();
  private readonly timeoutMs: number;

  constructor(name: string, provider: Provider) {
    this.opts = parseProviderOptions(GgufOptionsSchema, provider.options, `providers.${name}.options`);
    this.timeoutMs = provider.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** The threads each model's context runs on: the catalog's `threads`, else chosen from the machine. */
  async threads(): Promise<number> {
    if (this.opts.threads !== undefined) return this.opts.threads;
    const { llama } = await this.runtime();
    return defaultGgufThreads(llama.cpuMathCores);
  }

  private runtime(): Promise<{ lib: NodeLlamaCpp; llama: Llama }> {
    this.llama ??= (async () => {
      const lib = await importNodeLlamaCpp();
      const llama = await lib.getLlama({ gpu: false, build: 'never', logLevel: lib.LlamaLogLevel.error });
      return { lib, llama };
    })();
    return this.llama;
  }

  private modelPath(host: ResolvedHost): string {
    return isAbsolute(host.model) ? host.model : resolve(this.opts.modelsDir ?? process.cwd(), host.model);
  }

  private load(host: ResolvedHost): Promise<LoadedModel> {
    const path = this.modelPath(host);
    let loaded = this.models.get(host.id);
    if (!loaded) {
      loaded = (async () => {
        if (!existsSync(path)) {
          throw new ProviderFailure('bad_request', `${host.id}: no model file at ${path}`, { retryable: false, status: 404 });
        }
        const { llama } = await this.runtime();
        const threads = await this.threads();
        const model = await llama.loadModel({ modelPath: path });
        const context = await model.createContext({
          contextSize: Math.min(host.contextWindow, model.trainContextSize),
          sequences: 1,
          threads,
        });
        return { model, context, sequence: context.getSequence(), turn: new Semaphore(1) };
      })();
      // A failed load is not remembered: the next call tries again (the file may appear).
      loaded.catch(() => this.models.delete(host.id));
      this.models.set(host.id, loaded);
    }
    return loaded;
  }

  async call(host: ResolvedHost, request: ModelRequest): Promise<HostResponse> {
    const { lib } = await this.runtime();
    // Loading is paid once per model and not bounded by a call's timeout (a large file takes long).
    const m = await this.load(host);
    // The timeout covers the rest: waiting for the model's turn, and generating.
    const call = callSignal(request.signal, this.timeoutMs);
    try {
      return await this.generate(lib, m, host, request, call.signal);
    } catch (err) {
      if (err instanceof PanoptesError) throw err;
      if (call.signal.aborted) throw failureFromNetwork(host.id, err, request.signal?.aborted ? 'abort' : 'timeout');
      throw new ProviderFailure('server_error', `${host.id}: ${(err as Error).message}`, { retryable: true, cause: err });
    } finally {
      call.release();
    }
  }

  private async generate(lib: NodeLlamaCpp, m: LoadedModel, host: ResolvedHost, request: ModelRequest, signal: AbortSignal): Promise<HostResponse> {
    await m.turn.acquire(signal);
    const started = performance.now();
    const sequence = m.sequence;
    let session: InstanceType<NodeLlamaCpp['LlamaChatSession']> | undefined;
    try {
      const last = request.messages.at(-1);
      if (!last || last.role !== 'user') {
        throw new ProviderFailure('bad_request', `${host.id}: the last message must be the user's`, { retryable: false });
      }
      const history: ChatHistoryItem[] = request.messages.slice(0, -1).map((t) =>
        t.role === 'system'
          ? { type: 'system', text: t.content }
          : t.role === 'user'
            ? { type: 'user', text: t.content }
            : { type: 'model', response: [t.content] },
      );
      session = new lib.LlamaChatSession({ contextSequence: sequence, autoDisposeSequence: false });
      // Replaces the session's default system prompt: the model sees the request's messages only.
      session.setChatHistory(history);
      const before = { input: sequence.tokenMeter.usedInputTokens, output: sequence.tokenMeter.usedOutputTokens };
      const s = request.sampling;
      const res = await session.promptWithMeta(last.content, {
        ...(s.maxTokens === undefined ? {} : { maxTokens: s.maxTokens }),
        ...(s.temperature === undefined ? {} : { temperature: s.temperature }),
        ...(s.topP === undefined ? {} : { topP: s.topP }),
        ...(s.seed === undefined ? {} : { seed: s.seed }),
        ...(s.stop === undefined || s.stop.length === 0 ? {} : { customStopTriggers: s.stop }),
        signal,
      });
      const usage = {
        inputTokens: sequence.tokenMeter.usedInputTokens - before.input,
        outputTokens: sequence.tokenMeter.usedOutputTokens - before.output,
      };
      return { text: res.responseText, usage, latencyMs: performance.now() - started, finishReason: res.stopReason };
    } finally {
      session?.dispose({ disposeSequence: false });
      // Every call starts from an empty context: no answer may lean on another call's tokens.
      await sequence.clearHistory().catch(() => undefined);
      m.turn.release();
    }
  }

  async close(): Promise<void> {
    const loaded = await Promise.allSettled(this.models.values());
    this.models.clear();
    for (const r of loaded) {
      if (r.status === 'fulfilled') {
        await r.value.context.dispose();
        await r.value.model.dispose();
      }
    }
    if (this.llama) {
      const rt = await this.llama.catch(() => undefined);
      this.llama = undefined;
      await rt?.llama.dispose();
    }
  }
}
