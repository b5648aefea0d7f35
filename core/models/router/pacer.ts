/**
 * Pacing for one provider: at most `maxConcurrency` calls in flight, and call starts spaced by
 * 60 000 / rpm ms. Each caller reserves the next start time and moves the mark on in one
 * synchronous step (the event loop is the lock: no other caller runs between the read and the
 * write), then sleeps until its slot, so concurrent callers stagger to distinct slots and the
 * provider never sees more than its RPM. A slot reserved by a caller that gives up stays used:
 * pacing errs on the slow side.
 * Runs on: Node (core).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Semaphore } from '../../workers/semaphore.js';

export class ProviderPacer {
  readonly intervalMs: number;
  private readonly slots: Semaphore | undefined;
  private nextStart = 0;

  constructor(opts: { rpm?: number | undefined; maxConcurrency?: number | undefined }) {
    this.intervalMs = opts.rpm ? 60_000 / opts.rpm : 0;
    this.slots = opts.maxConcurrency ? new Semaphore(opts.maxConcurrency) : undefined;
  }

  /** Whether this provider has any limit (a pacer without one is never consulted). */
  get limits(): boolean {
    return this.intervalMs > 0 || this.slots !== undefined;
  }

  /** Waits for a concurrency slot, then for this call's start time. Pair with `leave()`. */
  async enter(signal?: AbortSignal): Promise<void> {
    if (this.slots) await this.slots.acquire(signal);
    if (this.intervalMs === 0) return;
    const now = performance.now();
    const start = Math.max(now, this.nextStart);
    this.nextStart = start + this.intervalMs;
    if (start > now) {
      try {
        await sleep(start - now, undefined, signal ? { signal } : undefined);
      } catch (err) {
        this.slots?.release();
        throw err;
      }
    }
  }

  leave(): void {
    this.slots?.release();
  }
}
