/**
 * Where a code plugin runs: QuickJS compiled to WebAssembly, in a worker thread of the plugin's own.
 * The plugin gets a QuickJS runtime with a memory cap and a time cap per call, and a global scope
 * holding only the language (no require, process, fetch, timers, files or modules); the record
 * goes in as one JSON string and the result comes back as one. The thread keeps the event loop
 * that lands records and serves requests free whatever a plugin does, and it is the backstop of
 * the time cap: QuickJS interrupts the plugin's own code at the cap, but a single call into one of
 * its native built-ins (indexOf over an array-like of 2^40 items, filling a huge sparse array)
 * cannot be interrupted, so a thread that does not answer in time is stopped and started again.
 * Runs on: Node (core).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';

/** Memory one plugin's runtime may allocate (heap, objects, strings). */
const PLUGIN_MEMORY_BYTES = 32 * 1024 * 1024;
/** How long one call may run before QuickJS interrupts it. */
const PLUGIN_CALL_MS = 100;
/** How long the plugin's top-level code may run when it is compiled (once per thread, and after a cap was hit). */
const PLUGIN_LOAD_MS = 1000;
/** Native stack a plugin may use: deep recursion is a stack-overflow error, not a crash. */
const PLUGIN_STACK_BYTES = 512 * 1024;
/** Records sent to the thread at once. */
const MAX_BATCH = 64;
/**
 * How long the thread may take over a batch before it is stopped: starting QuickJS (a second on a
 * busy machine), then for each record its cap and a fresh runtime after a cap was hit.
 */
const THREAD_GRACE_MS = 5000;
const PER_RECORD_MS = PLUGIN_CALL_MS + PLUGIN_LOAD_MS;
/** A thread with nothing to do for this long is stopped (a server may score many versions over its life); the next record starts it again. */
const IDLE_MS = 60_000;
/** Characters of a plugin's explanation that are kept. */
const MAX_EXPLANATION = 2000;

// Runs in the plugin's global scope after its source: wraps `score` so that the host passes the
// record as one JSON string and gets back one JSON string describing what `score` returned.
const ENTRY = `(function (score, parse, stringify) {
  if (typeof score !== 'function') throw new TypeError('the plugin defines no function score(input)');
  const num = (v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v);
  const kindOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : v instanceof Promise ? 'promise' : typeof v);
  const field = (v) => (v === undefined || v === null || typeof v === 'number' || typeof v === 'boolean' ? num(v) : typeof v === 'string' ? v.slice(0, ${MAX_EXPLANATION}) : { type: kindOf(v) });
  return function (json) {
    const r = score(parse(json));
    const kind = kindOf(r);
    if (kind === 'number' || kind === 'boolean') return stringify({ kind, value: num(r) });
    if (kind !== 'object') return stringify({ kind: 'other', type: kind });
    return stringify({ kind, value: field(r.value), passed: field(r.passed), explanation: field(r.explanation) });
  };
})(typeof score === 'undefined' ? undefined : score, JSON.parse, JSON.stringify)`;

/** Code that goes through what most plugins use: the parser, closures, JSON, strings and regular expressions. */
const WARM_UP = `JSON.stringify(JSON.parse('[1,{"a":"b c"}]').map(function (x) {
  const s = String(typeof x === 'object' ? x.a : x);
  return [s.replace(/b/g, 'd').split(' ').length, s.trim().toLowerCase(), /\\d+/.test(s), Math.min(1, s.length / 10)];
}))`;

/**
 * The plugin's thread. Records are handled one after another; a call that hit a cap leaves the
 * runtime in a state not worth trusting, so the thread drops the whole QuickJS instance and the
 * next record gets a fresh one with the plugin compiled again. A plugin that does not load (a
 * top-level throw, no `score`) fails every record with the same reason.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { quickjs, source, filename, memoryBytes, stackBytes, callMs, loadMs, entry, warmUp } = workerData;
const { newQuickJSWASMModule } = require(quickjs);
// The first evaluations in a QuickJS instance compile much of its WebAssembly; that is paid for
// here, outside any cap, rather than inside the plugin's first call.
const freshEngine = () => newQuickJSWASMModule().then((e) => {
  const runtime = e.newRuntime();
  const context = runtime.newContext();
  const r = context.evalCode(warmUp, 'warm-up.js');
  (r.error || r.value).dispose();
  context.dispose();
  runtime.dispose();
  return e;
});
let engine = freshEngine();
let plugin = null;
let loadError = null;
let deadline = 0;

function describe(ctx, handle) {
  const d = ctx.dump(handle);
  handle.dispose();
  const text = d && typeof d === 'object'
    ? (typeof d.name === 'string' ? d.name : 'Error') + ': ' + (typeof d.message === 'string' ? d.message : JSON.stringify(d))
    : 'threw ' + (typeof d === 'string' ? d : JSON.stringify(d));
  if (/interrupted/i.test(text) && Date.now() > deadline) return 'ran past its time cap (' + callMs + ' ms a call, ' + loadMs + ' ms to load) and was interrupted';
  if (/out of memory/i.test(text)) return 'ran out of its ' + Math.round(memoryBytes / 1048576) + ' MiB memory cap';
  return text;
}
function settle(ctx, r) {
  if (!r.error) return r.value;
  throw new Error(describe(ctx, r.error));
}
function compile(e) {
  const runtime = e.newRuntime();
  runtime.setMemoryLimit(memoryBytes);
  runtime.setMaxStackSize(stackBytes);
  runtime.setInterruptHandler(() => Date.now() > deadline);
  const context = runtime.newContext();
  deadline = Date.now() + loadMs;
  settle(context, context.evalCode(source, filename)).dispose();
  return { context, entry: settle(context, context.evalCode(entry, 'panoptes-entry.js')) };
}
async function call(json) {
  if (await load()) throw new Error('the plugin did not load: ' + loadError);
  const ctx = plugin.context;
  const arg = ctx.newString(json);
  deadline = Date.now() + callMs;
  const r = ctx.callFunction(plugin.entry, ctx.undefined, arg);
  arg.dispose();
  const h = settle(ctx, r);
  try {
    return ctx.typeof(h) === 'string' ? ctx.getString(h) : '';
  } finally {
    h.dispose();
  }
}
async function load() {
  const e = await engine;
  if (!plugin && !loadError) {
    try {
      plugin = compile(e);
    } catch (err) {
      loadError = err.message;
    }
  }
  return loadError;
}
let queue = Promise.resolve();
parentPort.on('message', ({ id, inputs, loadOnly }) => {
  queue = queue.then(async () => {
    if (loadOnly) return parentPort.postMessage({ id, results: [], loadError: await load() });
    const results = [];
    for (const json of inputs) {
      try {
        results.push({ ok: await call(json) });
      } catch (err) {
        const message = String((err && err.message) || err);
        results.push({ error: message });
        if (/time cap|memory cap|^Aborted\\(|not alive/.test(message)) {
          plugin = null;
          engine = freshEngine();
        }
      }
    }
    parentPort.postMessage({ id, results });
  });
});`;

/** One record's outcome: what the entry returned (a JSON string), or why the call failed. */
export type CallOutcome = { ok: string } | { error: string };

const ReplySchema = z
  .object({
    id: z.number().int(),
    results: z.array(z.union([z.object({ ok: z.string() }).strict(), z.object({ error: z.string() }).strict()])),
    /** For a load only: why the plugin does not load, or null. */
    loadError: z.string().nullable().optional(),
  })
  .strict();

interface Pending {
  json: string;
  resolve: (outcome: CallOutcome) => void;
  /** A load of the plugin, not a record. */
  loadOnly?: boolean;
}

interface Batch {
  items: Pending[];
  timer: NodeJS.Timeout;
}

/** The host side of one plugin's thread: started on the first call, stopped by `close`. */
export class PluginThread {
  private worker: Worker | undefined;
  private nextId = 0;
  private queued: Pending[] = [];
  private flushScheduled = false;
  private readonly inFlight = new Map<number, Batch>();
  private closed = false;
  private idle: NodeJS.Timeout | undefined;

  constructor(
    private readonly source: string,
    private readonly filename: string,
  ) {}

  /** Scores one record's JSON in the plugin; calls made in the same turn of the event loop travel together. */
  call(json: string): Promise<CallOutcome> {
    if (this.closed) return Promise.resolve({ error: 'the plugin is closed' });
    return new Promise((resolve) => {
      this.queued.push({ json, resolve });
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        while (this.queued.length > 0) this.send(this.queued.splice(0, MAX_BATCH));
      });
    });
  }

  /**
   * Loads the plugin (runs its top-level code and finds `score`) without scoring anything: why it
   * does not load, or null.
   */
  load(): Promise<string | null> {
    if (this.closed) return Promise.resolve('the plugin is closed');
    return new Promise((resolve) => this.send([{ json: '', resolve: (o) => resolve('error' in o ? o.error : null), loadOnly: true }]));
  }

  /** Stops the thread (and with it the plugin's QuickJS instance); calls still waiting fail. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idle);
    const worker = this.worker;
    this.worker = undefined;
    for (const [id, batch] of this.inFlight) {
      clearTimeout(batch.timer);
      this.inFlight.delete(id);
      for (const p of batch.items) p.resolve({ error: 'the plugin was closed before it answered' });
    }
    for (const p of this.queued.splice(0)) p.resolve({ error: 'the plugin was closed before it answered' });
    await worker?.terminate();
  }

  private send(items: Pending[]): void {
    clearTimeout(this.idle);
    const worker = this.thread();
    const id = this.nextId++;
    const timer = setTimeout(() => this.stopHung(id), THREAD_GRACE_MS + items.length * PER_RECORD_MS);
    this.inFlight.set(id, { items, timer });
    worker.ref();
    const loadOnly = items[0]?.loadOnly === true;
    worker.postMessage({ id, inputs: loadOnly ? [] : items.map((p) => p.json), loadOnly });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        quickjs: createRequire(import.meta.url).resolve('quickjs-emscripten'),
        source: this.source,
        filename: this.filename,
        memoryBytes: PLUGIN_MEMORY_BYTES,
        stackBytes: PLUGIN_STACK_BYTES,
        callMs: PLUGIN_CALL_MS,
        loadMs: PLUGIN_LOAD_MS,
        entry: ENTRY,
        warmUp: WARM_UP,
      },
    });
    worker.on('message', (raw: unknown) => this.answered(raw));
    worker.on('error', (err) => this.lost(worker, `the plugin's thread failed: ${err.message}`));
    worker.on('exit', (code) => this.lost(worker, `the plugin's thread stopped (exit code ${code})`));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private answered(raw: unknown): void {
    const reply = ReplySchema.safeParse(raw);
    if (!reply.success) return;
    const batch = this.inFlight.get(reply.data.id);
    if (!batch) return;
    clearTimeout(batch.timer);
    this.inFlight.delete(reply.data.id);
    if (batch.items[0]?.loadOnly) batch.items[0].resolve(reply.data.loadError ? { error: reply.data.loadError } : { ok: '' });
    else batch.items.forEach((p, i) => p.resolve(reply.data.results[i] ?? { error: 'the plugin thread gave no answer for this record' }));
    if (this.inFlight.size === 0) this.stopWhenIdle();
  }

  /** Lets the process exit while the thread waits, and stops the thread if it stays idle. */
  private stopWhenIdle(): void {
    const worker = this.worker;
    if (!worker) return;
    worker.unref();
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (this.worker !== worker || this.inFlight.size > 0) return;
      this.worker = undefined;
      void worker.terminate();
    }, IDLE_MS);
    this.idle.unref();
  }

  /** A batch ran past its time: a native call the interrupt cannot reach. Stop the thread and find the record. */
  private stopHung(id: number): void {
    if (!this.inFlight.has(id) || !this.worker) return;
    const worker = this.worker;
    this.lost(worker, 'did not answer in time (a single call into a native built-in, which QuickJS cannot interrupt) and its thread was stopped');
    void worker.terminate();
  }

  /**
   * The thread is gone. The thread works through batches in order, so the oldest one held the record
   * that stopped it: that batch is sent again one record at a time (a record alone fails with the
   * reason), and the batches behind it are sent again as they were.
   */
  private lost(worker: Worker, reason: string): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    const [culprit, ...behind] = [...this.inFlight.values()];
    this.inFlight.clear();
    for (const batch of [culprit, ...behind]) if (batch) clearTimeout(batch.timer);
    if (this.closed || !culprit) return;
    if (culprit.items.length === 1) culprit.items[0]!.resolve({ error: reason });
    else for (const p of culprit.items) this.send([p]);
    for (const batch of behind) this.send(batch.items);
  }
}
