/**
 * One GGUF model in a process of its own, which the gguf provider can always end. node-llama-cpp
 * runs JavaScript around its native calls (chat templates, tokenizing, history compression) that
 * can hold a thread for seconds or, once a generation outgrows its context, for ever; in the
 * engine's process that would freeze the event loop (records, events, the UI, SIGTERM). Here the
 * engine's side only passes messages, and a call that must end (timeout, cancel) is aborted in the
 * child and, if the child does not answer within `STOP_GRACE_MS`, the child is killed with SIGKILL
 * (a worker thread was tried: terminating one inside node-llama-cpp's native work aborts the
 * whole process). The next call starts a fresh child and loads the model again.
 *
 * The child never lets a generation outgrow its window: the output cap is at most the window minus
 * the prompt's tokens, counted with the model's own tokenizer and chat template, and a context
 * shift (node-llama-cpp's history compression) is refused outright rather than run. A prompt with
 * no room left for one token of answer is refused before anything is evaluated.
 * Runs on: Node (core).
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** How long a child may take to stop after its call was aborted before it is killed. */
export const STOP_GRACE_MS = 500;

/** Tokens kept free at the end of the window: node-llama-cpp shifts its context once the last one fills. */
const WINDOW_RESERVE = 1;

/** The child: plain CommonJS run with `node -e`, so it needs no build step and runs under Electron too. */
const CHILD_SOURCE = `
const { pathToFileURL } = require('node:url');
const WINDOW_RESERVE = ${WINDOW_RESERVE};
let lib, llama, model, context, sequence;
let current;
const send = (m) => { if (process.connected) process.send(m); };
const refuseShift = () => { throw Object.assign(new Error('context shift refused'), { overflow: true }); };
process.on('disconnect', () => process.exit(0));
process.on('message', (m) => {
  handle(m).catch((err) => send({ type: 'failed', id: m.id, message: String((err && err.message) || err), aborted: !!(current && current.ac.signal.aborted), overflow: !!(err && err.overflow) }));
});
async function handle(m) {
  if (m.type === 'runtime') {
    lib = await import(pathToFileURL(m.lib).href);
    llama = await lib.getLlama({ gpu: false, build: 'never', logLevel: lib.LlamaLogLevel.error });
    send({ type: 'runtime', id: m.id, cpuMathCores: llama.cpuMathCores });
  } else if (m.type === 'open') {
    model = await llama.loadModel({ modelPath: m.modelPath });
    context = await model.createContext({ contextSize: Math.min(m.contextWindow, model.trainContextSize), sequences: 1, threads: m.threads });
    sequence = context.getSequence();
    send({ type: 'opened', id: m.id, contextSize: context.contextSize });
  } else if (m.type === 'abort') {
    if (current && current.id === m.id) current.ac.abort();
  } else if (m.type === 'call') {
    current = { id: m.id, ac: new AbortController() };
    try {
      send(await generate(m, current.ac.signal));
    } finally {
      current = undefined;
    }
  }
}
async function generate(m, signal) {
  let session;
  try {
    session = new lib.LlamaChatSession({ contextSequence: sequence, autoDisposeSequence: false, contextShift: { strategy: refuseShift } });
    session.setChatHistory(m.history);
    const rendered = session.chatWrapper.generateContextState({ chatHistory: [...m.history, { type: 'user', text: m.prompt }, { type: 'model', response: [] }] });
    const promptTokens = rendered.contextText.tokenize(model.tokenizer).length;
    const room = context.contextSize - promptTokens - WINDOW_RESERVE;
    if (room < 1) return { type: 'too_long', id: m.id, promptTokens, window: context.contextSize };
    const maxTokens = Math.min(m.sampling.maxTokens === undefined ? room : m.sampling.maxTokens, room);
    const before = { input: sequence.tokenMeter.usedInputTokens, output: sequence.tokenMeter.usedOutputTokens };
    const s = m.sampling;
    const res = await session.promptWithMeta(m.prompt, {
      maxTokens,
      ...(s.temperature === undefined ? {} : { temperature: s.temperature }),
      ...(s.topP === undefined ? {} : { topP: s.topP }),
      ...(s.seed === undefined ? {} : { seed: s.seed }),
      ...(s.stop === undefined || s.stop.length === 0 ? {} : { customStopTriggers: s.stop }),
      signal,
    });
    return {
      type: 'answer',
      id: m.id,
      text: res.responseText,
      stopReason: res.stopReason,
      maxTokens,
      inputTokens: sequence.tokenMeter.usedInputTokens - before.input,
      outputTokens: sequence.tokenMeter.usedOutputTokens - before.output,
    };
  } finally {
    if (session) session.dispose({ disposeSequence: false });
    // Every call starts from an empty context: no answer may lean on another call's tokens.
    await sequence.clearHistory().catch(() => undefined);
  }
}
`;

export type ChildTurn = { type: 'system'; text: string } | { type: 'user'; text: string } | { type: 'model'; response: string[] };

export interface ChildSampling {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  seed?: number;
  stop?: string[];
}

export type CallReply =
  | { type: 'answer'; id: number; text: string; stopReason: string; maxTokens: number; inputTokens: number; outputTokens: number }
  | { type: 'too_long'; id: number; promptTokens: number; window: number };

interface FailedReply {
  type: 'failed';
  id: number;
  message: string;
  aborted: boolean;
  overflow: boolean;
}

type Reply =
  | CallReply
  | FailedReply
  | { type: 'runtime'; id: number; cpuMathCores: number }
  | { type: 'opened'; id: number; contextSize: number };

/** A failure the child reported, or its death. */
export class ModelProcessError extends Error {
  constructor(
    message: string,
    readonly kind: 'failed' | 'overflow' | 'exited',
  ) {
    super(message);
    this.name = 'ModelProcessError';
  }
}

export interface ModelProcessOptions {
  /** node-llama-cpp's entry file, as resolved in the engine's process. */
  lib: string;
  modelPath: string;
  contextWindow: number;
  /** Inference threads from the machine's math cores (as llama.cpp counts them). */
  threadsFor: (cpuMathCores: number) => number;
}

export interface OpenedModel {
  contextSize: number;
  threads: number;
}

export class GgufModelProcess {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  private exited: ModelProcessError | undefined;
  private stderrTail = '';
  private endNoted = false;
  /** Resolves once the model is loaded and its context made. */
  readonly opened: Promise<OpenedModel>;
  /** Resolves when the child has exited. */
  readonly gone: Promise<void>;
  /** Should the engine exit without closing its router, the child goes with it, however busy. */
  private readonly killOnExit = () => this.kill();

  /**
   * @param onEnd called once, when the child is killed or exits: from then on it takes no calls,
   * and its owner starts another for the next.
   */
  constructor(
    opts: ModelProcessOptions,
    private readonly onEnd: () => void,
  ) {
    this.child = spawn(process.execPath, ['-e', CHILD_SOURCE], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      // Under Electron, execPath is the app: this makes it a plain Node for the child.
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    });
    this.child.stderr!.on('data', (d: Buffer) => (this.stderrTail = (this.stderrTail + d.toString()).slice(-2000)));
    this.child.on('message', (reply: Reply) => {
      const w = this.waiting.get(reply.id);
      if (!w) return;
      this.waiting.delete(reply.id);
      this.idleUnlessWaiting();
      if (reply.type === 'failed') w.reject(new ModelProcessError(reply.message, reply.overflow ? 'overflow' : 'failed'));
      else w.resolve(reply);
    });
    this.child.on('error', (err) => this.died(`the model process failed: ${err.message}`));
    this.gone = new Promise((resolveGone) =>
      this.child.on('exit', (code, signal) => {
        this.died(`the model process exited (${signal ?? `code ${code}`})`);
        resolveGone();
      }),
    );
    process.once('exit', this.killOnExit);
    this.opened = (async () => {
      const runtime = await this.request({ type: 'runtime', lib: opts.lib });
      if (runtime.type !== 'runtime') throw new ModelProcessError(`unexpected reply ${runtime.type}`, 'failed');
      const threads = opts.threadsFor(runtime.cpuMathCores);
      const opened = await this.request({ type: 'open', modelPath: opts.modelPath, contextWindow: opts.contextWindow, threads });
      if (opened.type !== 'opened') throw new ModelProcessError(`unexpected reply ${opened.type}`, 'failed');
      return { contextSize: opened.contextSize, threads };
    })();
    this.opened.catch(() => undefined);
  }

  /**
   * One generation. Resolves or rejects only when the child is done with it (answered, failed,
   * stopped after an abort, or killed), so the model's next call never meets this one. `signal`
   * aborts it in the child; a child that has not stopped `STOP_GRACE_MS` later is killed.
   */
  async generate(call: { history: ChildTurn[]; prompt: string; sampling: ChildSampling }, signal: AbortSignal): Promise<CallReply> {
    const id = ++this.nextId;
    let kill: NodeJS.Timeout | undefined;
    const onAbort = () => {
      this.send({ type: 'abort', id });
      kill = setTimeout(() => this.kill(), STOP_GRACE_MS);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const reply = await this.request({ type: 'call', ...call }, id);
      if (reply.type !== 'answer' && reply.type !== 'too_long') throw new ModelProcessError(`unexpected reply ${reply.type}`, 'failed');
      return reply;
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (kill) clearTimeout(kill);
    }
  }

  /** Ends the child at once (SIGKILL: whatever it is doing, native code included). */
  kill(): void {
    if (this.exited || this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGKILL');
    this.ended();
  }

  private request(message: Record<string, unknown>, id = ++this.nextId): Promise<Reply> {
    if (this.exited) return Promise.reject(this.exited);
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      // Alive while something waits on it, and only then: an idle model keeps no process running.
      this.child.ref();
      this.child.channel?.ref();
      this.send({ ...message, id });
    });
  }

  private send(message: Record<string, unknown>): void {
    if (!this.exited && this.child.connected) this.child.send(message);
  }

  private idleUnlessWaiting(): void {
    if (this.waiting.size > 0) return;
    this.child.unref();
    this.child.channel?.unref();
  }

  private ended(): void {
    if (this.endNoted) return;
    this.endNoted = true;
    this.onEnd();
  }

  private died(why: string): void {
    if (this.exited) return;
    process.off('exit', this.killOnExit);
    const tail = this.stderrTail.trim().split('\n').at(-1);
    this.exited = new ModelProcessError(tail ? `${why}: ${tail}` : why, 'exited');
    for (const w of this.waiting.values()) w.reject(this.exited);
    this.waiting.clear();
    this.ended();
  }
}
