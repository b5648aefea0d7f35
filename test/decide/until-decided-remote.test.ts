/**
 * Remote workers and runs posed until decided: such a run hands its vignettes out a batch at a time
 * as its decision allows, which only this process's own workers take. A coordinator with nothing but
 * a real `panoptes worker` process fails the run's jobs saying so (no call is made, nothing lands);
 * the command line refuses `--until-decided --no-local` before it creates anything.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeTargetManifest } from '../helpers/temp.js';
import { TOKEN, assertBuilt, spawnWorker, startCoordinator, stopWorkers, waitFor, type Coordinator, type WorkerProcess } from '../remote/harness.js';

const workers: WorkerProcess[] = [];
const coordinators: Coordinator[] = [];

beforeAll(assertBuilt);
afterEach(async () => {
  await stopWorkers(workers.splice(0));
  for (const c of coordinators.splice(0)) await c.close();
});

it('a remote worker refuses the jobs of a run posed until decided, and the run fails saying why', async () => {
  const coord = await startCoordinator({ models: { 'rm-a': { latencyMs: 1, accuracy: 0.9 }, 'rm-b': { latencyMs: 1, accuracy: 0.5 } }, maxAttempts: 2 });
  coordinators.push(coord);
  workers.push(spawnWorker({ id: 'w1', catalogPath: coord.catalogPath, port: coord.listener.port, capacity: 4 }));
  await waitFor(() => coord.engine.pool.list().length === 1, 15_000, 'the worker to register');

  const manifestPath = writeTargetManifest(coord.dir, 40);
  const run = await coord.engine.service.createRun({
    manifestPath,
    models: ['rm-a', 'rm-b'],
    epochs: 1,
    scorers: { scorers: [{ name: 'exact', type: 'match' }] },
    untilDecided: {},
  });
  const final = await coord.engine.runToEnd(run.id);
  expect(final.status).toBe('failed');
  const jobs = coord.engine.store.queries.jobs(run.id);
  expect(jobs).toHaveLength(2);
  for (const j of jobs) {
    expect(j.status).toBe('failed');
    expect(j.error).toContain("a run posed until decided (--until-decided) runs only on this process's own workers");
  }
  expect(coord.engine.store.queries.usageByModel(run.id).reduce((s, u) => s + u.calls, 0)).toBe(0);
});

it('the command line refuses --until-decided with --no-local, and its flags without it, creating nothing', async () => {
  const { dir, cleanup } = tempDir('panoptes-adaptive-cli-');
  try {
    const manifest = writeTargetManifest(dir, 4);
    const base = ['run', '--data-dir', join(dir, 'data'), '--manifest', manifest, '--models', 'mock-strong,mock-weak'];
    const noLocal = await runCli([...base, '--until-decided', '--listen', '0', '--no-local'], { PANOPTES_WORKER_TOKEN: TOKEN });
    expect(noLocal.code).toBe(2);
    expect(noLocal.stderr).toContain("--until-decided runs on this process's own workers");
    const noScorers = await runCli([...base, '--until-decided']);
    expect(noScorers.code).toBe(2);
    expect(noScorers.stderr).toContain('--until-decided needs --scorers');
    const stray = await runCli([...base, '--order-seed', '3']);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('--order-seed goes with --until-decided');
    const strayBudget = await runCli([...base, '--max-calls', '100']);
    expect(strayBudget.code).toBe(2);
    expect(strayBudget.stderr).toContain('--max-calls goes with --until-decided');
    const badBudget = await runCli([...base, '--until-decided', '--max-calls', 'lots']);
    expect(badBudget.code).toBe(2);
    expect(badBudget.stderr).toContain('--max-calls');
    const runs = await runCli(['runs', '--data-dir', join(dir, 'data'), '--json']);
    expect(runs.stdout.trim() === '' || (JSON.parse(runs.stdout) as unknown[]).length === 0).toBe(true);
  } finally {
    cleanup();
  }
});
