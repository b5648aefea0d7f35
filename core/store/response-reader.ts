/**
 * Reads the Responses view's pages off the main thread: a worker thread of the store's own, on a
 * read-only connection to the same database file, runs a page's SQL (made by RunQueries on the
 * store's connection, see response-page-query.ts) and hands back its rows. An order no index gives
 * (a sort of a million matches) or a substring search over every answer can take seconds at a
 * million records; in the thread it takes them without holding the event loop that serves requests
 * and lands records, and WAL lets it read while the store writes. Pages are read one after another,
 * in the order asked. A page that takes longer than `timeoutMs` is refused and the thread stopped
 * (the next page starts a new one), so no caller waits forever. An in-memory store has no file to
 * share: its pages are read on its own connection.
 * Runs on: Node (core).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { PanoptesError } from '../domain.js';
import type { ResponseRow } from './run-rows.js';

/** A page that takes longer than this is refused (a million-record sort on a loaded machine takes seconds). */
export const READ_TIMEOUT_MS = 120_000;
/** Statements kept prepared in the thread: one per query shape the view asks for. */
const PREPARED_MAX = 64;

/** The thread: prepares each page's SQL once per shape and answers its rows. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path, { readonly: true, fileMustExist: true, nativeBinding: workerData.nativeBinding });
db.pragma('busy_timeout = 10000');
const prepared = new Map();
parentPort.on('message', ({ id, sql, params }) => {
  try {
    let stmt = prepared.get(sql);
    if (stmt === undefined) {
      if (prepared.size >= ${PREPARED_MAX}) prepared.clear();
      stmt = db.prepare(sql);
      prepared.set(sql, stmt);
    }
    parentPort.postMessage({ id, rows: stmt.all(params) });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
});`;

interface Reply {
  id: number;
  rows?: ResponseRow[];
  error?: string;
}

interface Waiting {
  resolve: (rows: ResponseRow[]) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export interface ResponseReaderOptions {
  /** The database file. */
  path: string;
  /** The better-sqlite3 addon the store loaded (Electron's differs from Node's); by default, the package's own. */
  nativeBinding?: string | undefined;
  timeoutMs?: number | undefined;
}

export class ResponseReader {
  private thread: Worker | undefined;
  private nextId = 0;
  private readonly waiting = new Map<number, Waiting>();

  constructor(private readonly opts: ResponseReaderOptions) {}

  /** The rows of one page's SQL, read in the thread. */
  rows(sql: string, params: Record<string, unknown>): Promise<ResponseRow[]> {
    const thread = this.start();
    const id = this.nextId++;
    return new Promise<ResponseRow[]>((resolve, reject) => {
      const timeoutMs = this.opts.timeoutMs ?? READ_TIMEOUT_MS;
      const timer = setTimeout(() => {
        this.stop(new PanoptesError('timeout', `a responses page took over ${timeoutMs / 1000} s to read: narrow the search`, { where: 'responses' }));
      }, timeoutMs);
      this.waiting.set(id, { resolve, reject, timer });
      thread.ref();
      thread.postMessage({ id, sql, params });
    });
  }

  /** Stops the thread; pages still waiting are refused. */
  close(): void {
    this.stop(new PanoptesError('conflict', 'the store closed while a responses page was read', { where: 'responses' }));
  }

  private start(): Worker {
    if (this.thread) return this.thread;
    const thread = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { module: createRequire(import.meta.url).resolve('better-sqlite3'), path: this.opts.path, nativeBinding: this.opts.nativeBinding },
    });
    thread.on('message', (reply: Reply) => {
      if (this.thread !== thread) return;
      const w = this.waiting.get(reply.id);
      if (!w) return;
      this.waiting.delete(reply.id);
      clearTimeout(w.timer);
      // The thread keeps the process alive only while a page is waiting.
      if (this.waiting.size === 0) thread.unref();
      if (reply.rows) w.resolve(reply.rows);
      else w.reject(new PanoptesError('server_error', `reading a responses page failed: ${reply.error ?? 'no answer'}`, { where: 'responses' }));
    });
    // A thread stopped on purpose has been replaced (or closed) already: its end refuses nothing more.
    thread.on('error', (err) => this.thread === thread && this.stop(err));
    thread.on('exit', (code) => this.thread === thread && this.stop(new PanoptesError('server_error', `the responses reader stopped (${code})`, { where: 'responses' })));
    thread.unref();
    this.thread = thread;
    return thread;
  }

  private stop(err: Error): void {
    const thread = this.thread;
    this.thread = undefined;
    for (const w of this.waiting.values()) {
      clearTimeout(w.timer);
      w.reject(err);
    }
    this.waiting.clear();
    void thread?.terminate();
  }
}
