/**
 * Sweeps over real `panoptes worker` processes: three workers land every record exactly once,
 * share the jobs, never hold more than their capacity, and report live per-job progress; the
 * CLI's `panoptes run --listen --no-local` drives a sweep over workers end to end; a run whose
 * model no worker serves fails saying so instead of hanging.
 * Runs on: Node (tests).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../core/store/store.js';
import { databasePath } from '../../core/paths.js';
import { startCli, waitForStderr } from '../helpers/cli.js';
import { tempDir, writeManifest, writeMockCatalog } from '../helpers/temp.js';
import { expectExactlyOnce } from '../helpers/verify.js';
import { TOKEN, assertBuilt, spawnWorker, startCoordinator, stopWorkers, waitFor, type Coordinator, type WorkerProcess } from './harness.js';

const workers: WorkerProcess[] = [];
const coordinators: Coordinator[] = [];

beforeAll(assertBuilt);
afterEach(async () => {
  await stopWorkers(workers.splice(0));
  for (const c of coordinators.splice(0)) await c.close();
});

describe('a sweep over worker processes', () => {
  it('lands every record exactly once across 3 workers, within their capacity, with live progress', async () => {
    const coord = await startCoordinator({
      models: { 'sw-a': { latencyMs: 8, jitterMs: 4 }, 'sw-b': { latencyMs: 8, jitterMs: 4 }, 'sw-c': { latencyMs: 8, jitterMs: 4 } },
      listener: { heartbeatMs: 150 },
    });
    coordinators.push(coord);
    for (const id of ['w1', 'w2', 'w3']) workers.push(spawnWorker({ id, catalogPath: coord.catalogPath, port: coord.listener.port, capacity: 2 }));
    await waitFor(() => coord.engine.pool.list().length === 3, 15_000, 'three workers to register');

    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(120), models: ['sw-a', 'sw-b', 'sw-c'], epochs: 4, concurrency: 12 });
    let maxInFlight = 0;
    let progressSeen = 0;
    const sampler = setInterval(() => {
      for (const w of coord.engine.pool.list()) {
        maxInFlight = Math.max(maxInFlight, w.inFlight);
        for (const j of w.jobs ?? []) progressSeen = Math.max(progressSeen, j.vignettesDone);
      }
    }, 10);
    const final = await coord.engine.scheduler.runToCompletion(run.id).finally(() => clearInterval(sampler));

    expect(final.status).toBe('done');
    expect(final.doneCount).toBe(12);
    expect(final.failedCount).toBe(0);
    expectExactlyOnce(coord.engine.store, coord.dataDir, run.id);
    const usage = coord.engine.store.queries.usageByModel(run.id);
    expect(usage.map((u) => [u.model, u.calls])).toEqual([['sw-a', 480], ['sw-b', 480], ['sw-c', 480]]);
    const jobs = coord.engine.store.queries.jobs(run.id);
    expect(jobs.every((j) => j.status === 'done' && j.vignettesDone === 120)).toBe(true);
    expect(new Set(jobs.map((j) => j.workerId)).size).toBeGreaterThanOrEqual(2);
    expect(maxInFlight).toBeLessThanOrEqual(2);
    expect(maxInFlight).toBe(2);
    expect(progressSeen).toBeGreaterThan(0);
    const listed = coord.engine.pool.list().sort((a, b) => a.id.localeCompare(b.id));
    expect(listed.map((w) => [w.id, w.kind, w.alive, w.capacity])).toEqual([
      ['w1', 'remote', true, 2],
      ['w2', 'remote', true, 2],
      ['w3', 'remote', true, 2],
    ]);
    // By default a worker serves every model of its own catalog (the embedded one plus the test's).
    for (const w of listed) expect(w.models).toEqual(expect.arrayContaining(['sw-a', 'sw-b', 'sw-c', 'mock-fast']));
  });

  it('fails a run whose model no worker serves, saying so', async () => {
    const coord = await startCoordinator({ models: { 'only-a': { latencyMs: 1 }, 'nobody-b': { latencyMs: 1 } }, waitForWorkerMs: 1500 });
    coordinators.push(coord);
    workers.push(spawnWorker({ id: 'only-a-worker', catalogPath: coord.catalogPath, port: coord.listener.port, models: 'only-a' }));
    await waitFor(() => coord.engine.pool.list().length === 1, 15_000, 'the worker to register');
    expect(coord.engine.pool.list()[0]!.models).toEqual(['only-a']);

    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(5), models: ['only-a', 'nobody-b'], epochs: 1 });
    const final = await coord.engine.scheduler.runToCompletion(run.id);
    expect(final.status).toBe('failed');
    expect(final.doneCount).toBe(1);
    expect(final.error).toContain('nobody-b@1: no live worker serves model "nobody-b"');
  });
});

describe('panoptes run --listen --no-local', () => {
  it('drives a sweep over worker processes from the command line', async () => {
    const { dir, cleanup } = tempDir('panoptes-remote-cli-');
    try {
      const catalog = writeMockCatalog(dir, { 'cli-a': { latencyMs: 5 }, 'cli-b': { latencyMs: 5 } });
      const manifest = writeManifest(dir, 40);
      const dataDir = `${dir}/data`;
      const coordinator = startCli(
        ['run', '--data-dir', dataDir, '--catalog', catalog, '--manifest', manifest, '--models', 'cli-a,cli-b', '--epochs', '3',
          '--listen', '0', '--no-local', '--json'],
        { PANOPTES_WORKER_TOKEN: TOKEN },
      );
      const [, port] = await waitForStderr(coordinator, /listening for workers on 127\.0\.0\.1:(\d+)/);
      for (const id of ['cli-w1', 'cli-w2']) workers.push(spawnWorker({ id, catalogPath: catalog, port: Number(port) }));
      const result = await coordinator.done;
      expect(result.code).toBe(0);
      const summary = JSON.parse(result.stdout.trim().split('\n').pop()!) as { run_id: string; status: string; done_count: number; job_count: number };
      expect(summary).toMatchObject({ status: 'done', done_count: 6, job_count: 6 });
      const store = new Store(databasePath(dataDir));
      try {
        expectExactlyOnce(store, dataDir, summary.run_id);
        expect(new Set(store.queries.jobs(summary.run_id).map((j) => j.workerId))).not.toContain('local');
      } finally {
        store.close();
      }
    } finally {
      cleanup();
    }
  });

  it('a worker with the wrong token exits 1 saying the coordinator refused it', async () => {
    const coord = await startCoordinator({ models: { 'tok-a': {} } });
    coordinators.push(coord);
    const w = spawnWorker({ id: 'wrong-token', catalogPath: coord.catalogPath, port: coord.listener.port, token: 'not-the-token' });
    workers.push(w);
    expect(await w.exited).toEqual({ code: 1, signal: null });
    expect(w.stderr()).toContain('panoptes: the coordinator refused this worker: invalid worker token');
    expect(coord.engine.pool.list()).toEqual([]);
  });

  it('refuses --no-local without --listen, and --listen without a token', async () => {
    const { dir, cleanup } = tempDir('panoptes-remote-cli-');
    try {
      const manifest = writeManifest(dir, 2);
      const base = ['run', '--data-dir', `${dir}/data`, '--manifest', manifest, '--models', 'mock-fast'];
      const noListen = await startCli([...base, '--no-local']).done;
      expect(noListen.code).toBe(2);
      expect(noListen.stderr).toContain('--no-local needs --listen');
      const noToken = await startCli([...base, '--listen', '0'], { PANOPTES_WORKER_TOKEN: '' }).done;
      expect(noToken.code).toBe(2);
      expect(noToken.stderr).toContain('--listen needs a worker token');
    } finally {
      cleanup();
    }
  });
});
