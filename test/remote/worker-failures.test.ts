/**
 * Worker failure, with real processes: kill -9 of a worker holding jobs, 20 times at random
 * moments, loses nothing and counts nothing twice; a SIGSTOPped worker (a half-open connection)
 * is found dead by its missed heartbeats and its jobs are redelivered, and once SIGCONTed its late
 * work changes nothing; a worker outlives a coordinator restart, reconnects by itself, and the
 * restarted coordinator finishes the interrupted run.
 * Runs on: Node (tests).
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { responsesPath } from '../../core/paths.js';
import type { Store } from '../../core/store/store.js';
import { tempDir } from '../helpers/temp.js';
import { expectExactlyOnce } from '../helpers/verify.js';
import { assertBuilt, spawnWorker, startCoordinator, stopWorkers, waitFor, type Coordinator, type WorkerProcess } from './harness.js';
import { seededRandom } from '../helpers/seeded-random.js';

const workers: WorkerProcess[] = [];
const coordinators: Coordinator[] = [];

beforeAll(assertBuilt);
afterEach(async () => {
  await stopWorkers(workers.splice(0));
  for (const c of coordinators.splice(0)) await c.close();
});

/** Everything about a run that a late or duplicate result could disturb. */
function snapshot(store: Store, dataDir: string, runId: string) {
  return {
    run: store.queries.getRun(runId),
    jobs: store.queries.jobs(runId),
    usage: store.queries.usageByModel(runId),
    responses: store.queries.responseCount(runId),
    log: readFileSync(responsesPath(dataDir, runId), 'utf8'),
  };
}

function expectNothingCountedTwice(store: Store, runId: string, vignettes: number, epochs: number): void {
  const jobs = store.queries.jobs(runId);
  expect(jobs.every((j) => j.status === 'done' && j.vignettesDone === vignettes)).toBe(true);
  for (const u of store.queries.usageByModel(runId)) {
    expect(u.calls).toBe(vignettes * epochs);
    const ofModel = jobs.filter((j) => j.model === u.model);
    expect(ofModel.reduce((n, j) => n + j.usage.inputTokens, 0)).toBe(u.inputTokens);
    expect(ofModel.reduce((n, j) => n + j.usage.outputTokens, 0)).toBe(u.outputTokens);
  }
}

describe('remote worker failures', () => {
  it('survives kill -9 of a worker with jobs in flight, 20 times at random moments', async () => {
    const coord = await startCoordinator({
      models: { 'k-a': { latencyMs: 20, jitterMs: 10 }, 'k-b': { latencyMs: 20, jitterMs: 10 }, 'k-c': { latencyMs: 20, jitterMs: 10 } },
      maxAttempts: 100,
      listener: { heartbeatMs: 500 },
    });
    coordinators.push(coord);
    const random = seededRandom('kill -9 of remote workers');
    // Slow workers while killing (the run must outlast 20 kills), fast finishers afterwards.
    let spawned = 0;
    const live = new Map<string, WorkerProcess>();
    const spawnOne = (capacity: number, callConcurrency: number) => {
      const w = spawnWorker({ id: `k${++spawned}`, catalogPath: coord.catalogPath, port: coord.listener.port, capacity, callConcurrency });
      live.set(w.id, w);
      workers.push(w);
    };
    for (let i = 0; i < 4; i++) spawnOne(2, 1);
    await waitFor(() => coord.engine.pool.list().length === 4, 20_000, 'four workers');

    const vignettes = 60;
    const epochs = 8;
    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(vignettes), models: ['k-a', 'k-b', 'k-c'], epochs, concurrency: 8 });
    let finished = false;
    const done = coord.engine.scheduler.runToCompletion(run.id).finally(() => (finished = true));

    let kills = 0;
    while (kills < 20 && !finished) {
      const busy = () => coord.engine.pool.list().filter((w) => w.inFlight > 0 && live.has(w.id));
      await waitFor(() => finished || busy().length > 0, 30_000, 'a worker with jobs in flight');
      if (finished) break;
      await sleep(random.between(0, 250));
      const candidates = busy();
      if (candidates.length === 0) continue;
      const victim = live.get(random.pick(candidates).id)!;
      victim.child.kill('SIGKILL');
      live.delete(victim.id);
      kills += 1;
      spawnOne(2, 1);
    }
    for (let i = 0; i < 2; i++) spawnOne(4, 16);
    const final = await done;

    expect(kills).toBe(20);
    expect(final.status, `${final.error ?? ''} (kill points of seed ${random.seed})`).toBe('done');
    expect(final.doneCount).toBe(final.jobCount);
    expect(final.failedCount).toBe(0);
    expectExactlyOnce(coord.engine.store, coord.dataDir, run.id);
    expectNothingCountedTwice(coord.engine.store, run.id, vignettes, epochs);
    expect(coord.engine.store.queries.jobs(run.id).some((j) => j.attempt > 1)).toBe(true);
  }, 150_000);

  it('redelivers the jobs of a SIGSTOPped worker after the heartbeat timeout; after SIGCONT its late work changes nothing', async () => {
    const coord = await startCoordinator({
      models: { 's-a': { latencyMs: 20, jitterMs: 5 }, 's-b': { latencyMs: 20, jitterMs: 5 } },
      listener: { heartbeatMs: 250, missedHeartbeats: 3 },
    });
    coordinators.push(coord);
    const frozen = spawnWorker({ id: 'frozen', catalogPath: coord.catalogPath, port: coord.listener.port, capacity: 2, callConcurrency: 4 });
    const steady = spawnWorker({ id: 'steady', catalogPath: coord.catalogPath, port: coord.listener.port, capacity: 2, callConcurrency: 4 });
    workers.push(frozen, steady);
    await waitFor(() => coord.engine.pool.list().length === 2, 15_000, 'two workers');

    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(60), models: ['s-a', 's-b'], epochs: 4, concurrency: 4 });
    const done = coord.engine.scheduler.runToCompletion(run.id);
    const frozenInfo = () => coord.engine.pool.list().find((w) => w.id === 'frozen');
    await waitFor(() => (frozenInfo()?.jobs?.length ?? 0) > 0, 10_000, 'jobs on the worker to freeze');
    const held = frozenInfo()!.jobs!.map((j) => ({ jobId: j.jobId, attempt: j.attempt }));
    frozen.child.kill('SIGSTOP');
    const stoppedAt = Date.now();

    await waitFor(() => frozenInfo() === undefined, 10_000, 'the frozen worker to be presumed dead');
    const detectedMs = Date.now() - stoppedAt;
    // Dead after 3 silent intervals (750 ms) counted from the last frame heard, which can precede the
    // stop by up to one interval: so no sooner than 2 intervals after SIGSTOP.
    expect(detectedMs).toBeGreaterThanOrEqual(500);
    expect(detectedMs).toBeLessThan(4000);
    const final = await done;
    expect(final.status, final.error ?? '').toBe('done');
    for (const h of held) {
      const job = coord.engine.store.queries.getJob(h.jobId)!;
      expect(job.status).toBe('done');
      // Settled by a later attempt on the other worker: the frozen one's attempt is stale.
      expect(job.attempt).toBeGreaterThan(h.attempt);
      expect(job.workerId).toBe('steady');
    }
    const before = snapshot(coord.engine.store, coord.dataDir, run.id);

    frozen.child.kill('SIGCONT');
    // It wakes to a dead connection, drops its stale jobs and registers again.
    await waitFor(() => frozenInfo()?.alive === true, 15_000, 'the thawed worker to reconnect');
    await sleep(500);
    expect(snapshot(coord.engine.store, coord.dataDir, run.id)).toEqual(before);
    expectExactlyOnce(coord.engine.store, coord.dataDir, run.id);
    expectNothingCountedTwice(coord.engine.store, run.id, 60, 4);
  });

  it('reconnects a worker by itself when the coordinator restarts, and the restarted coordinator finishes the run', async () => {
    const { dir, cleanup } = tempDir('panoptes-remote-restart-');
    try {
      const models = { 'r-a': { latencyMs: 15, jitterMs: 5 }, 'r-b': { latencyMs: 15, jitterMs: 5 } };
      const first = await startCoordinator({ models, dir });
      const port = first.listener.port;
      const worker = spawnWorker({ id: 'survivor', catalogPath: first.catalogPath, port, capacity: 2, callConcurrency: 2 });
      workers.push(worker);
      await waitFor(() => first.engine.pool.list().length === 1, 15_000, 'the worker');
      const run = await first.engine.service.createRun({ manifestPath: first.manifest(50), models: ['r-a', 'r-b'], epochs: 3, concurrency: 2 });
      const interrupted = first.engine.scheduler.runToCompletion(run.id);
      await waitFor(() => first.engine.store.queries.responseCount(run.id) >= 40, 15_000, 'some records');
      await first.close();
      expect((await interrupted).status).not.toBe('done');

      const second = await startCoordinator({ models, dir, listener: { port } });
      coordinators.push(second);
      await waitFor(() => second.engine.pool.list().length === 1, 15_000, 'the worker to reconnect');
      expect(worker.child.exitCode).toBeNull();
      const final = await second.engine.scheduler.runToCompletion(run.id);
      expect(final.status, final.error ?? '').toBe('done');
      expectExactlyOnce(second.engine.store, second.dataDir, run.id);
      expectNothingCountedTwice(second.engine.store, run.id, 50, 3);
      expect(worker.stderr()).toMatch(/disconnected from coordinator/);
    } finally {
      await stopWorkers(workers.splice(0));
      for (const c of coordinators.splice(0)) await c.close();
      cleanup();
    }
  });
});
