/**
 * A counting semaphore with FIFO waiters and abortable acquire: bounds work in flight
 * (model calls per worker, calls per provider) without queueing a closure per item.
 * Runs on: Node (core).
 */
export class Semaphore {
  private available: number;
  private readonly waiters: Array<{ resolve: () => void; reject: (e: unknown) => void; signal?: AbortSignal; onAbort?: () => void }> = [];

  constructor(readonly permits: number) {
    if (!Number.isInteger(permits) || permits < 1) throw new RangeError(`permits must be a positive integer, got ${permits}`);
    this.available = permits;
  }

  get inUse(): number {
    return this.permits - this.available;
  }

  acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.available > 0 && this.waiters.length === 0) {
      this.available -= 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: (typeof this.waiters)[number] = { resolve, reject };
      if (signal) {
        waiter.signal = signal;
        waiter.onAbort = () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
    });
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) {
      if (next.signal && next.onAbort) next.signal.removeEventListener('abort', next.onAbort);
      next.resolve();
    } else {
      this.available = Math.min(this.permits, this.available + 1);
    }
  }
}
