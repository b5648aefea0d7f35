/**
 * Worker churn and the pool's wait: a job that first waited on busy workers still gets the full
 * `waitForWorkerMs` for a serving worker to (re)appear once none is left — the situation of every
 * remote worker dying at once while a replacement starts — and fails saying so only after that.
 * Runs on: Node (tests).
 */
import { describe, expect, it } from 'vitest';
import { Catalog } from '../../core/models/catalog.js';
import { Router } from '../../core/models/router/router.js';
import { LocalWorker } from '../../core/workers/local-worker.js';
import { WorkerPool } from '../../core/workers/worker-pool.js';

const catalog = Catalog.parse(
  { providers: { m: { kind: 'mock', trainsOnData: false } }, models: { x: { hosts: [{ provider: 'm', model: 'x', contextWindow: 1000 }] } } },
  'test',
);
const worker = (id: string) => new LocalWorker({ id, client: new Router({ catalog }), capacity: 1 });

describe('WorkerPool.acquire under churn', () => {
  it('waits the full time for a new worker after the busy one it waited on is gone', async () => {
    const pool = new WorkerPool({ waitForWorkerMs: 400 });
    pool.add(worker('a'));
    const held = await pool.acquire('x', new Set(), new AbortController().signal);
    const waiting = pool.acquire('x', new Set(), new AbortController().signal);
    await new Promise((r) => setTimeout(r, 600)); // busy longer than waitForWorkerMs
    pool.remove('a');
    held.release();
    await new Promise((r) => setTimeout(r, 250)); // none left, but within the wait
    pool.add(worker('b'));
    const lease = await waiting;
    expect(lease.worker.id).toBe('b');
  });

  it('fails saying so when none appears within the wait', async () => {
    const pool = new WorkerPool({ waitForWorkerMs: 200 });
    const started = Date.now();
    await expect(pool.acquire('x', new Set(), new AbortController().signal)).rejects.toThrow('no live worker serves model "x"');
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });
});
