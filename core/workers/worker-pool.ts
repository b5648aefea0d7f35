/**
 * WorkerPool: the live workers and their free capacity. `acquire` hands out the least-loaded live
 * worker that serves a model (avoiding those a job already failed on, while others exist), waits
 * while all such workers are busy, and says so at once when none serves the model at all.
 * Runs on: Node (core).
 */
import { EventEmitter } from 'node:events';
import { PanoptesError } from '../domain.js';
import type { WorkerHandle, WorkerInfo } from './worker-handle.js';

export interface WorkerSlot {
  worker: WorkerHandle;
  release(): void;
}

export interface WorkerPoolOptions {
  /** How long `acquire` waits for some worker serving the model to appear (default 0: fail at once). */
  waitForWorkerMs?: number;
}

export class WorkerPool extends EventEmitter<{ changed: [] }> {
  private readonly workers = new Map<string, { handle: WorkerHandle; busy: number }>();
  private readonly waitForWorkerMs: number;

  constructor(opts: WorkerPoolOptions = {}) {
    super();
    this.waitForWorkerMs = opts.waitForWorkerMs ?? 0;
  }

  add(handle: WorkerHandle): void {
    this.workers.set(handle.id, { handle, busy: 0 });
    this.emit('changed');
  }

  remove(id: string): void {
    if (this.workers.delete(id)) this.emit('changed');
  }

  /** Tells waiters to look again (a worker's liveness or load changed). */
  notify(): void {
    this.emit('changed');
  }

  list(): WorkerInfo[] {
    return [...this.workers.values()].map((w) => w.handle.info());
  }

  handles(): WorkerHandle[] {
    return [...this.workers.values()].map((w) => w.handle);
  }

  /** Whether any live worker serves the model. */
  serves(model: string): boolean {
    for (const w of this.workers.values()) if (w.handle.isAlive() && w.handle.serves(model)) return true;
    return false;
  }

  private pick(model: string, avoid: ReadonlySet<string>): { handle: WorkerHandle; busy: number } | 'busy' | 'none' {
    let best: { handle: WorkerHandle; busy: number } | undefined;
    let bestAvoided: { handle: WorkerHandle; busy: number } | undefined;
    let anyServes = false;
    for (const w of this.workers.values()) {
      if (!w.handle.isAlive() || !w.handle.serves(model)) continue;
      anyServes = true;
      if (w.busy >= w.handle.capacity) continue;
      const load = w.busy / w.handle.capacity;
      if (avoid.has(w.handle.id)) {
        if (!bestAvoided || load < bestAvoided.busy / bestAvoided.handle.capacity) bestAvoided = w;
      } else if (!best || load < best.busy / best.handle.capacity) {
        best = w;
      }
    }
    if (best) return best;
    if (!anyServes) return 'none';
    // Every worker not yet tried is busy or gone: prefer waiting for one of them, unless the
    // workers already tried are all that serve the model.
    const untriedExists = [...this.workers.values()].some(
      (w) => w.handle.isAlive() && w.handle.serves(model) && !avoid.has(w.handle.id),
    );
    if (!untriedExists && bestAvoided) return bestAvoided;
    return 'busy';
  }

  async acquire(model: string, avoid: ReadonlySet<string>, signal: AbortSignal): Promise<WorkerSlot> {
    // The wait for a serving worker starts each time none is left (waiting on busy ones does not count).
    let deadline = Infinity;
    for (;;) {
      signal.throwIfAborted();
      const got = this.pick(model, avoid);
      if (got === 'busy') deadline = Infinity;
      else if (got === 'none' && deadline === Infinity) deadline = Date.now() + this.waitForWorkerMs;
      if (got !== 'busy' && got !== 'none') {
        got.busy += 1;
        let released = false;
        return {
          worker: got.handle,
          release: () => {
            if (released) return;
            released = true;
            got.busy -= 1;
            this.emit('changed');
          },
        };
      }
      if (got === 'none' && Date.now() >= deadline) {
        throw new PanoptesError('no_host', this.noWorkerMessage(model), { retryable: false, where: 'models' });
      }
      await this.changedOrTimeout(got === 'none' ? Math.max(1, deadline - Date.now()) : 1000, signal);
    }
  }

  /**
   * Why no worker serves a model, the remedy first: a missing key is what people can fix, so
   * `model "X" needs an API key: set K (no live worker serves it either)`; otherwise
   * `no live worker serves model "X"`, with what each worker said.
   */
  private noWorkerMessage(model: string): string {
    const keyEnvs = new Set<string>();
    const said: string[] = [];
    for (const { handle } of this.workers.values()) {
      const why = handle.isAlive() ? handle.unavailableReason?.(model) : undefined;
      if (why?.kind === 'no_key') for (const k of why.keyEnvs) keyEnvs.add(k);
      else if (why?.kind === 'not_in_catalog') said.push(`${handle.id}: not in its catalog`);
    }
    if (keyEnvs.size > 0) {
      return `model "${model}" needs an API key: set ${[...keyEnvs].join(' or ')} (no live worker serves it either${said.map((s) => `; ${s}`).join('')})`;
    }
    return `no live worker serves model "${model}"${said.length > 0 ? ` (${said.join('; ')})` : ''}`;
  }

  private changedOrTimeout(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.off('changed', done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.on('changed', done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
