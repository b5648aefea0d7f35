/**
 * The `gguf` provider: a local GGUF model file run with node-llama-cpp, so a model on disk can be
 * evaluated with no server and no key. node-llama-cpp is an optional dependency; it runs on the
 * CPU with its prebuilt binaries (never a source build). A host's `model` is the file's path
 * (relative to the provider option `modelsDir`, else to the working directory); its
 * `contextWindow` is the context size used. Each model runs in a process of its own
 * (gguf-process.ts), started on its first call, so nothing node-llama-cpp does can hold the
 * engine's event loop, and a call always ends: by its answer, by the provider's `timeoutMs`, or
 * by cancellation, within `STOP_GRACE_MS` of which the model's process is killed if it has not
 * stopped. Each model answers one call at a time on its own context sequence, cleared between
 * calls; token counts are the sequence's own meter: the tokens really evaluated and generated.
 * The conversation is exactly the request's messages: node-llama-cpp's chat session would add its
 * own default system prompt (about 70 tokens, counted as input) to a vignette without one.
 * A generation never outgrows the window: the output cap is at most the window minus the prompt
 * (the model's own tokenizer), and an answer cut there says `length`.
 * Provider options:
 *   modelsDir   folder for relative model paths
 *   threads     CPU threads for inference (default: the machine's math cores minus one for the
 *               engine's own event loop, at least 1; node-llama-cpp's own default, 4, took 200x
 *               longer per call on a 2-core machine)
 * Runs on: Node (core).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { PanoptesError } from '../../domain.js';
import { Semaphore } from '../../concurrency/semaphore.js';
import type { Provider, ResolvedHost } from '../catalog.js';
import type { ModelRequest } from '../model-client.js';
import { callSignal } from './call-signal.js';
import { failureFromNetwork, ProviderFailure } from './failures.js';
import { GgufModelProcess, ModelProcessError, type CallReply, type ChildSampling, type ChildTurn } from './gguf-process.js';
import type { HostClient, HostResponse } from './host-client.js';
import { DEFAULT_TIMEOUT_MS } from './openai.js';
import { parseProviderOptions } from './options.js';

export const GgufOptionsSchema = z
  .object({ modelsDir: z.string().optional(), threads: z.number().int().positive().optional() })
  .strict();

/**
 * Inference threads when the catalog sets none: every core llama.cpp finds useful for math but
 * one, which the engine's event loop (records, events, the UI) needs to stay responsive.
 */
export function defaultGgufThreads(cpuMathCores: number): number {
  return Math.max(1, cpuMathCores - 1);
}

/** node-llama-cpp's entry file, for the model process to import. */
function nodeLlamaCppEntry(): string {
  try {
    return createRequire(import.meta.url).resolve('node-llama-cpp');
  } catch (err) {
    throw new PanoptesError(
      'invalid_input',
      'the gguf provider needs the optional dependency node-llama-cpp (npm install node-llama-cpp@3.21.1)',
      { cause: err },
    );
  }
}

/** `p`, or the signal's reason as soon as it aborts (what `p` does afterwards is left to its owner). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolvePromise, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolvePromise, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** How llama.cpp's stop reasons read in a record, as the other providers say them. */
function finishReasonOf(stopReason: string): string {
  if (stopReason === 'maxTokens') return 'length';
  if (stopReason === 'eogToken' || stopReason === 'stopGenerationTrigger' || stopReason === 'customStopTrigger') return 'stop';
  return stopReason;
}

function conversationOf(host: ResolvedHost, request: ModelRequest): { history: ChildTurn[]; prompt: string; sampling: ChildSampling } {
  const last = request.messages.at(-1);
  if (!last || last.role !== 'user') {
    throw new ProviderFailure('bad_request', `${host.id}: the last message must be the user's`, { retryable: false });
  }
  const history: ChildTurn[] = request.messages.slice(0, -1).map((t) =>
    t.role === 'system' ? { type: 'system', text: t.content } : t.role === 'user' ? { type: 'user', text: t.content } : { type: 'model', response: [t.content] },
  );
  const s = request.sampling;
  const sampling: ChildSampling = {
    ...(s.maxTokens === undefined ? {} : { maxTokens: s.maxTokens }),
    ...(s.temperature === undefined ? {} : { temperature: s.temperature }),
    ...(s.topP === undefined ? {} : { topP: s.topP }),
    ...(s.seed === undefined ? {} : { seed: s.seed }),
    ...(s.stop === undefined ? {} : { stop: [...s.stop] }),
  };
  return { history, prompt: last.content, sampling };
}

export class GgufHostClient implements HostClient {
  private readonly opts: z.output<typeof GgufOptionsSchema>;
  private readonly models = new Map<string, GgufModelProcess>();
  /** One call at a time per model (by host), across its processes: its single sequence holds one conversation. */
  private readonly turns = new Map<string, Semaphore>();
  private readonly timeoutMs: number;

  constructor(name: string, provider: Provider) {
    this.opts = parseProviderOptions(GgufOptionsSchema, provider.options, `providers.${name}.options`);
    this.timeoutMs = provider.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** The threads a host's model runs on: the catalog's `threads`, else chosen from the machine (loads the model). */
  async threadsOf(host: ResolvedHost): Promise<number> {
    return (await this.load(host).opened).threads;
  }

  private modelPath(host: ResolvedHost): string {
    return isAbsolute(host.model) ? host.model : resolve(this.opts.modelsDir ?? process.cwd(), host.model);
  }

  private load(host: ResolvedHost): GgufModelProcess {
    const known = this.models.get(host.id);
    if (known) return known;
    const path = this.modelPath(host);
    if (!existsSync(path)) {
      throw new ProviderFailure('bad_request', `${host.id}: no model file at ${path}`, { retryable: false, status: 404 });
    }
    const forget = () => {
      if (this.models.get(host.id) === child) this.models.delete(host.id);
    };
    const child = new GgufModelProcess(
      {
        lib: nodeLlamaCppEntry(),
        modelPath: path,
        contextWindow: host.contextWindow,
        threadsFor: (cores) => this.opts.threads ?? defaultGgufThreads(cores),
      },
      // A model whose process ended (killed, crashed) starts afresh on its next call.
      forget,
    );
    // A failed load is not remembered: the next call tries again (the file may be fixed).
    child.opened.catch(() => {
      forget();
      child.kill();
    });
    this.models.set(host.id, child);
    return child;
  }

  async call(host: ResolvedHost, request: ModelRequest): Promise<HostResponse> {
    const conversation = conversationOf(host, request);
    try {
      // Loading is paid once per model and not bounded by a call's timeout (a large file takes
      // long), only by cancellation.
      await untilAborted(this.load(host).opened, request.signal);
    } catch (err) {
      throw this.loadFailure(host, request, err);
    }
    // The timeout covers the rest: waiting for the model's turn, and generating.
    const call = callSignal(request.signal, this.timeoutMs);
    const turn = this.turnOf(host);
    try {
      await turn.acquire(call.signal);
      let reply: Promise<CallReply>;
      const started = performance.now();
      try {
        // The call before this one may have ended its process (killed after an abort): this starts
        // the next, whose loading is then the call's.
        const child = this.load(host);
        await untilAborted(child.opened, call.signal);
        reply = child.generate(conversation, call.signal);
      } catch (err) {
        turn.release();
        throw err;
      }
      // The model's turn is held until its process is done with the call: an aborted call ends for
      // its caller at once, and its process stops (or is killed) within STOP_GRACE_MS.
      const release = () => turn.release();
      reply.then(release, release);
      return this.response(host, await untilAborted(reply, call.signal), performance.now() - started);
    } catch (err) {
      if (err instanceof PanoptesError) throw err;
      if (call.signal.aborted) throw failureFromNetwork(host.id, err, request.signal?.aborted ? 'abort' : 'timeout');
      if (err instanceof ModelProcessError && err.kind === 'overflow') {
        throw new ProviderFailure('bad_request', `${host.id}: the answer would outgrow the context window (a context shift was refused)`, { retryable: false });
      }
      throw new ProviderFailure('server_error', `${host.id}: ${(err as Error).message}`, { retryable: true, cause: err });
    } finally {
      call.release();
    }
  }

  private turnOf(host: ResolvedHost): Semaphore {
    let turn = this.turns.get(host.id);
    if (!turn) {
      turn = new Semaphore(1);
      this.turns.set(host.id, turn);
    }
    return turn;
  }

  private loadFailure(host: ResolvedHost, request: ModelRequest, err: unknown): Error {
    if (err instanceof PanoptesError) return err;
    if (request.signal?.aborted) return failureFromNetwork(host.id, err, 'abort');
    return new ProviderFailure('server_error', `${host.id}: the model did not load: ${(err as Error).message}`, { retryable: true, cause: err });
  }

  private response(host: ResolvedHost, reply: CallReply, latencyMs: number): HostResponse {
    if (reply.type === 'too_long') {
      // 413: another host (a larger window) may hold it.
      throw new ProviderFailure(
        'bad_request',
        `${host.id}: the prompt needs ${reply.promptTokens} tokens, the context window is ${reply.window}`,
        { retryable: false, status: 413 },
      );
    }
    return {
      text: reply.text,
      usage: { inputTokens: reply.inputTokens, outputTokens: reply.outputTokens },
      latencyMs,
      finishReason: finishReasonOf(reply.stopReason),
    };
  }

  async close(): Promise<void> {
    const children = [...this.models.values()];
    this.models.clear();
    // A model process holds nothing worth saving: ending it is immediate, whatever it is doing.
    for (const child of children) child.kill();
    await Promise.all(children.map((child) => child.gone));
  }
}
