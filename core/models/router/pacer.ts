/**
 * Pacing for one provider: at most `maxConcurrency` calls in flight, and call starts at least
 * 60 000 / rpm ms apart. Callers take turns through a promise chain (the lock): each one, in
 * arrival order, waits until one interval after the previous call really started, then records
 * its own start. Spacing is measured from real starts, not from times booked in advance, so a
 * stalled event loop (a long GC, a loaded machine) cannot release a burst of overdue calls at
 * once: after a stall the provider still sees one call per interval.
 * Runs on: Node (core).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Semaphore } from '../../concurrency/semaphore.js';

export class ProviderPacer {
  readonly intervalMs: number;
  private readonly slots: Semaphore | undefined;
  /** performance.now() of the latest call start. */
  private lastStart = -Infinity;
  /** The tail of the queue of callers waiting for their start. */
  private turn: Promise<void> = Promise.resolve();

  constructor(opts: { rpm?: number | undefined; maxConcurrency?: number | undefined }) {
    this.intervalMs = opts.rpm ? 60_000 / opts.rpm : 0;
    this.slots = opts.maxConcurrency ? new Semaphore(opts.maxConcurrency) : undefined;
  }

  /** Whether this provider has any limit (a pacer without one is never consulted). */
  get limits(): boolean {
    return this.intervalMs > 0 || this.slots !== undefined;
  }

  /** Waits for a concurrency slot, then for this call's start. Pair with `leave()`. */
  async enter(signal?: AbortSignal): Promise<void> {
    if (this.slots) await this.slots.acquire(signal);
    if (this.intervalMs === 0) return;
    const mine = this.turn.then(() => this.startWhenDue(signal));
    // The next caller waits for this one to start (or give up), never for its answer.
    this.turn = mine.catch(() => undefined);
    try {
      await mine;
    } catch (err) {
      this.slots?.release();
      throw err;
    }
  }

  private async startWhenDue(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    const wait = this.lastStart + this.intervalMs - performance.now();
    if (wait > 0) await sleep(wait, undefined, signal ? { signal } : undefined);
    this.lastStart = performance.now();
  }

  leave(): void {
    this.slots?.release();
  }
}
