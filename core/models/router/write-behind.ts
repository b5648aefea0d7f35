/**
 * The router's writes (call metrics, cache entries, budget spend) buffered and committed together
 * in one transaction every `flushMs` (default 100 ms: rows that wait longer outlive young-generation GCs and swell the heap) or every `maxRows` rows (default 128),
 * whichever comes first, so the per-call path never waits on a commit. A commit blocks the event
 * loop for its fsync and its rows: few rows keep each block to a few ms (the Electron main process
 * hosts this), few commits keep the fsyncs cheap. Readers flush first, so what they see is complete. A
 * crash loses at most one interval of metrics and cache entries: both are advisory (the run's own
 * records are written by the scheduler, durably).
 * Runs on: Node (core).
 */
import type { Logger } from 'pino';
import type { BudgetRow, CacheRow, CallRow, RouterStore } from '../../store/router-store.js';

export interface WriteBehindOptions {
  flushMs?: number | undefined;
  maxRows?: number | undefined;
  logger?: Logger | undefined;
}

export class WriteBehind {
  private calls: CallRow[] = [];
  private cache: CacheRow[] = [];
  private budget: BudgetRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private readonly flushMs: number;
  private readonly maxRows: number;
  private closed = false;

  constructor(
    private readonly store: RouterStore,
    private readonly opts: WriteBehindOptions = {},
  ) {
    this.flushMs = opts.flushMs ?? 100;
    this.maxRows = opts.maxRows ?? 128;
  }

  call(row: CallRow): void {
    this.calls.push(row);
    this.scheduled();
  }

  cacheEntry(row: CacheRow): void {
    this.cache.push(row);
    this.scheduled();
  }

  spend(row: BudgetRow): void {
    this.budget.push(row);
    this.scheduled();
  }

  private get pending(): number {
    return this.calls.length + this.cache.length + this.budget.length;
  }

  private scheduled(): void {
    if (this.closed) return;
    if (this.pending >= this.maxRows) {
      // Full: commit on the next turn of the event loop, not inside the caller's call.
      this.immediate ??= setImmediate(() => this.flush());
    } else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Commits everything buffered now. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    if (this.pending === 0) return;
    const writes = { calls: this.calls, cache: this.cache, budget: this.budget };
    this.calls = [];
    this.cache = [];
    this.budget = [];
    try {
      this.store.write(writes);
    } catch (err) {
      // Metrics and cache are advisory: a failed commit (disk full, database closed) must not fail calls.
      this.opts.logger?.warn({ err: (err as Error).message, rows: writes.calls.length + writes.cache.length + writes.budget.length }, 'router: could not store metrics and cache entries');
    }
  }

  /** Flushes and stops accepting rows. */
  close(): void {
    this.flush();
    this.closed = true;
  }
}
