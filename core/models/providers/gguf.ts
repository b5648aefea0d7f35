/**
 * The `gguf` provider: a local GGUF model file run in this process with node-llama-cpp, so a model
 * on disk can be evaluated with no server and no key. node-llama-cpp is an optional dependency,
 * imported only when a gguf host is first called; it runs on the CPU with its prebuilt binaries
 * (never a source build). A host's `model` is the file's path (relative to the provider option
 * `modelsDir`, else to the working directory); its `contextWindow` is the context size used. Each
 * model answers one call at a time on its own context sequence, cleared between calls, and token
 * counts are the sequence's own meter: the tokens really evaluated and really generated.
 * Provider options:
 *   modelsDir   folder for relative model paths
 *   threads     CPU threads for inference (default: node-llama-cpp's choice)
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
import { failureFromNetwork, ProviderFailure } from './failures.js';
import type { HostClient, HostResponse } from './host-client.js';
import { parseProviderOptions } from './options.js';

export const GgufOptionsSchema = z
  .object({ modelsDir: z.string().optional(), threads: z.number().int().positive().optional() })
  .strict();

type NodeLlamaCpp = typeof import('node-llama-cpp');

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

  constructor(name: string, provider: Provider) {
    this.opts = parseProviderOptions(GgufOptionsSchema, provider.options, `providers.${name}.options`);
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
        const model = await llama.loadModel({ modelPath: path });
        const context = await model.createContext({
          contextSize: Math.min(host.contextWindow, model.trainContextSize),
          sequences: 1,
          ...(this.opts.threads === undefined ? {} : { threads: this.opts.threads }),
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
    const m = await this.load(host);
    await m.turn.acquire(request.signal);
    const started = performance.now();
    const sequence = m.sequence;
    try {
      const system = request.messages.filter((x) => x.role === 'system').map((x) => x.content).join('\n\n');
      const turns = request.messages.filter((x) => x.role !== 'system');
      const last = turns.at(-1);
      if (!last || last.role !== 'user') {
        throw new ProviderFailure('bad_request', `${host.id}: the last message must be the user's`, { retryable: false });
      }
      const history: ChatHistoryItem[] = turns.slice(0, -1).map((t) =>
        t.role === 'user' ? { type: 'user', text: t.content } : { type: 'model', response: [t.content] },
      );
      const session = new lib.LlamaChatSession({
        contextSequence: sequence,
        autoDisposeSequence: false,
        ...(system ? { systemPrompt: system } : {}),
      });
      if (history.length > 0) session.setChatHistory([...session.getChatHistory(), ...history]);
      const before = { input: sequence.tokenMeter.usedInputTokens, output: sequence.tokenMeter.usedOutputTokens };
      const s = request.sampling;
      const res = await session.promptWithMeta(last.content, {
        ...(s.maxTokens === undefined ? {} : { maxTokens: s.maxTokens }),
        ...(s.temperature === undefined ? {} : { temperature: s.temperature }),
        ...(s.topP === undefined ? {} : { topP: s.topP }),
        ...(s.seed === undefined ? {} : { seed: s.seed }),
        ...(s.stop === undefined || s.stop.length === 0 ? {} : { customStopTriggers: s.stop }),
        ...(request.signal ? { signal: request.signal } : {}),
      });
      const usage = {
        inputTokens: sequence.tokenMeter.usedInputTokens - before.input,
        outputTokens: sequence.tokenMeter.usedOutputTokens - before.output,
      };
      session.dispose({ disposeSequence: false });
      return { text: res.responseText, usage, latencyMs: performance.now() - started, finishReason: res.stopReason };
    } catch (err) {
      if (err instanceof PanoptesError) throw err;
      if (request.signal?.aborted) throw failureFromNetwork(host.id, err, 'abort');
      throw new ProviderFailure('server_error', `${host.id}: ${(err as Error).message}`, { retryable: true, cause: err });
    } finally {
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
