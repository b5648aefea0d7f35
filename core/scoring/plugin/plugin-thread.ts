/**
 * Where a code plugin runs: QuickJS compiled to WebAssembly, in a worker thread of the plugin's own.
 * The plugin gets a QuickJS runtime with a memory cap and a time cap per call, and a global scope
 * holding only the language (no require, process, fetch, timers, files or modules); the record
 * goes in as one JSON string and the result comes back as one, bounded in size (plugin-sandbox.ts
 * says how each cap is enforced). The thread keeps the event loop that lands records and serves
 * requests free whatever a plugin does. This side is the watchdog of the time cap: QuickJS
 * interrupts the plugin's own code at the cap, but a single call into one of its native built-ins
 * (indexOf over an array-like of 2^40 items) cannot be interrupted, so a thread past twice the cap
 * is stopped and started again; a plugin whose threads are lost again and again is stopped for good.
 * Runs on: Node (core).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import {
  MAX_EXPLANATION,
  MAX_RESULT_CHARS,
  PLUGIN_CALL_MS,
  PLUGIN_HEAP_BYTES,
  PLUGIN_LOAD_MS,
  PLUGIN_MEMORY_BYTES,
  PLUGIN_STACK_BYTES,
  PLUGIN_START_MS,
  WATCH_RECORD,
  WATCH_UNTIL,
  WORKER_SOURCE,
} from './plugin-sandbox.js';

/** Records sent to the thread at once. */
const MAX_BATCH = 64;
/** How often the watchdog looks at what a busy thread is doing. */
const WATCHDOG_TICK_MS = 20;
/** A thread with nothing to do for this long is stopped (a server may score many versions over its life); the next record starts it again. */
const IDLE_MS = 60_000;
/** Threads lost in a row (crashed, or stopped by the watchdog) with no record scored between them before the plugin is stopped for good. */
const MAX_LOSSES = 3;
/**
 * The thread's own heap (not the plugin's, which lives in its WebAssembly memory): what the
 * thread does with a plugin's result is bounded, so this is only ever reached by a fault, and
 * then it costs the thread, not the process.
 */
const THREAD_HEAP_MB = 128;

/**
 * One record's outcome: what the entry returned (a JSON string), why the call failed, or why the
 * plugin was stopped for good (its thread kept crashing): nothing more is scored with it.
 */
export type CallOutcome = { ok: string } | { error: string } | { stopped: string };

const ReplySchema = z
  .object({
    id: z.number().int(),
    results: z.array(
      z.union([z.object({ ok: z.string().max(MAX_RESULT_CHARS) }).strict(), z.object({ error: z.string().max(MAX_EXPLANATION) }).strict()]),
    ),
    /** For a load only: why the plugin does not load, or null. */
    loadError: z.string().max(MAX_EXPLANATION).nullable().optional(),
  })
  .strict();

interface Pending {
  json: string;
  resolve: (outcome: CallOutcome) => void;
  /** A load of the plugin, not a record. */
  loadOnly?: boolean;
}

/** The host side of one plugin's thread: started on the first call, stopped by `close`. */
export class PluginThread {
  private worker: Worker | undefined;
  /** What the thread is doing: until when it may, and on which record of its oldest batch (plugin-sandbox.ts). */
  private watch = new Float64Array(new SharedArrayBuffer(16));
  private watchdog: NodeJS.Timeout | undefined;
  private nextId = 0;
  private queued: Pending[] = [];
  private flushScheduled = false;
  /** Batches sent and not answered, oldest first: the thread works through them in order. */
  private readonly inFlight = new Map<number, Pending[]>();
  private closed = false;
  private idle: NodeJS.Timeout | undefined;
  private losses = 0;
  /** Why the plugin was stopped for good, once it was. */
  private stopped: string | undefined;

  constructor(
    private readonly source: string,
    private readonly filename: string,
  ) {}

  /** Scores one record's JSON in the plugin; calls made in the same turn of the event loop travel together. */
  call(json: string): Promise<CallOutcome> {
    if (this.stopped !== undefined) return Promise.resolve({ stopped: this.stopped });
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
    return new Promise((resolve) => this.send([{ json: '', resolve: (o) => resolve('ok' in o ? null : 'error' in o ? o.error : o.stopped), loadOnly: true }]));
  }

  /** Stops the thread (and with it the plugin's QuickJS instance); calls still waiting fail. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.idle);
    const worker = this.worker;
    this.forget();
    this.settleAll({ error: 'the plugin was closed before it answered' });
    await worker?.terminate();
  }

  private send(items: Pending[]): void {
    if (this.stopped !== undefined) {
      for (const p of items) p.resolve({ stopped: this.stopped });
      return;
    }
    clearTimeout(this.idle);
    const worker = this.thread();
    const id = this.nextId++;
    this.inFlight.set(id, items);
    worker.ref();
    this.watchdog ??= setInterval(() => this.check(), WATCHDOG_TICK_MS).unref();
    const loadOnly = items[0]?.loadOnly === true;
    worker.postMessage({ id, inputs: loadOnly ? [] : items.map((p) => p.json), loadOnly });
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const watchBuffer = new SharedArrayBuffer(16);
    this.watch = new Float64Array(watchBuffer);
    // Until the thread has started QuickJS and says what it does, it has the start's time.
    this.watch[WATCH_UNTIL] = Date.now() + PLUGIN_START_MS;
    this.watch[WATCH_RECORD] = -1;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
      workerData: {
        quickjs: createRequire(import.meta.url).resolve('quickjs-emscripten'),
        source: this.source,
        filename: this.filename,
        memoryBytes: PLUGIN_MEMORY_BYTES,
        heapBytes: PLUGIN_HEAP_BYTES,
        stackBytes: PLUGIN_STACK_BYTES,
        callMs: PLUGIN_CALL_MS,
        loadMs: PLUGIN_LOAD_MS,
        startMs: PLUGIN_START_MS,
        maxChars: MAX_EXPLANATION,
        resultChars: MAX_RESULT_CHARS,
        watchBuffer,
      },
    });
    worker.on('message', (raw: unknown) => this.answered(raw));
    worker.on('error', (err) => this.lost(worker, `its thread failed: ${err.message.slice(0, MAX_EXPLANATION)}`));
    worker.on('exit', (code) => this.lost(worker, `its thread stopped (exit code ${code})`));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private answered(raw: unknown): void {
    const reply = ReplySchema.safeParse(raw);
    if (!reply.success) {
      if (this.worker) this.lost(this.worker, 'its thread answered with something that is not a result');
      return;
    }
    const items = this.inFlight.get(reply.data.id);
    if (!items) return;
    this.inFlight.delete(reply.data.id);
    this.losses = 0;
    if (items[0]?.loadOnly) items[0].resolve(reply.data.loadError ? { error: reply.data.loadError } : { ok: '' });
    else items.forEach((p, i) => p.resolve(reply.data.results[i] ?? { error: 'the plugin thread gave no answer for this record' }));
    if (this.inFlight.size === 0) this.stopWhenIdle();
  }

  /** Lets the process exit while the thread waits, and stops the thread if it stays idle. */
  private stopWhenIdle(): void {
    clearInterval(this.watchdog);
    this.watchdog = undefined;
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

  /** The watchdog: a step past its time (a native call the interrupt cannot reach, a hung start) stops the thread. */
  private check(): void {
    const until = this.watch[WATCH_UNTIL]!;
    if (!this.worker || until === 0 || Date.now() <= until) return;
    const worker = this.worker;
    this.lost(worker, `ran past twice its time cap (${PLUGIN_CALL_MS} ms a call, ${PLUGIN_LOAD_MS} ms to load) in a call QuickJS cannot interrupt, and its thread was stopped`);
    void worker.terminate();
  }

  /**
   * The thread is gone. It works through batches in order and says which record it is on, so that
   * record fails with the reason and every other record in flight is sent again to a fresh thread
   * (a crash or a stop while the plugin loads fails none: the next thread loads it again). After
   * MAX_LOSSES in a row with nothing scored between, the plugin is stopped for good.
   */
  private lost(worker: Worker, reason: string): void {
    if (this.worker !== worker) return;
    const record = this.watch[WATCH_RECORD]!;
    const batches = [...this.inFlight.values()];
    this.forget();
    if (this.closed || batches.length === 0) return;
    this.losses += 1;
    if (this.losses >= MAX_LOSSES) {
      this.stopped = `its thread was lost ${MAX_LOSSES} times in a row (last: ${reason}), so the plugin was stopped`;
      for (const p of batches.flat()) p.resolve({ stopped: this.stopped });
      this.settleAll({ stopped: this.stopped });
      return;
    }
    const [oldest = [], ...behind] = batches;
    const culprit = oldest[0]?.loadOnly ? undefined : oldest[record];
    culprit?.resolve({ error: reason });
    const again = oldest.filter((p) => p !== culprit);
    if (again.length > 0) this.send(again);
    for (const items of behind) this.send(items);
  }

  /** Drops the current thread and its watchdog (batches in flight are the caller's to settle). */
  private forget(): void {
    this.worker = undefined;
    this.inFlight.clear();
    clearInterval(this.watchdog);
    this.watchdog = undefined;
  }

  private settleAll(outcome: CallOutcome): void {
    for (const items of this.inFlight.values()) for (const p of items) p.resolve(outcome);
    this.inFlight.clear();
    for (const p of this.queued.splice(0)) p.resolve(outcome);
  }
}
