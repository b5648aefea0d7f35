/**
 * A job on a real `panoptes worker` process whose only host is a local HTTP server that is down:
 * the coordinator's run shows "waiting for host" while the worker waits (its own router, its own
 * host patience), clears it once the server is back, and lists the vignette the worker gave up on
 * after its attempts, with its last error, as it does for a local job.
 * Runs on: Node (tests).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ServerProcess } from '../outages/openai-server.js';
import { assertBuilt, spawnWorker, startCoordinator, stopWorkers, waitFor, type Coordinator, type WorkerProcess } from './harness.js';

const workers: WorkerProcess[] = [];
const coordinators: Coordinator[] = [];
const servers: ServerProcess[] = [];

beforeAll(assertBuilt);
afterEach(async () => {
  await stopWorkers(workers.splice(0));
  for (const s of servers.splice(0)) await s.kill();
  for (const c of coordinators.splice(0)) await c.close();
});

describe('a remote worker tells the coordinator what its jobs wait for and give up on', () => {
  it('shows waiting for host while the server is down, then lists the vignette given up on', async () => {
    const down = await startOpenAIServer({ delayMs: 5 });
    const port = down.port;
    await down.kill();
    const coord = await startCoordinator({
      models: {},
      catalog: {
        providers: { srv0: { kind: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, trainsOnData: false, timeoutMs: 5000 } },
        models: { m: { hosts: [{ provider: 'srv0', model: 'm', contextWindow: 8192, inputPerMTok: 0, outputPerMTok: 0 }] } },
      },
    });
    coordinators.push(coord);
    workers.push(spawnWorker({ id: 'outage-w', catalogPath: coord.catalogPath, port: coord.listener.port, extraArgs: ['--host-patience', '120'] }));
    await waitFor(() => coord.engine.pool.list().length === 1, 15_000, 'the worker to register');

    const manifest = join(coord.dir, 'outage.jsonl');
    const prompts = ['question 0', 'question 1', 'question 2', 'question 3', 'ALWAYS500 please'];
    writeFileSync(manifest, prompts.map((prompt, i) => JSON.stringify({ id: `v${i}`, prompt })).join('\n') + '\n');
    const run = await coord.engine.service.createRun({ manifestPath: manifest, models: ['m'], epochs: 1, skipPromptCache: true });
    const done = coord.engine.scheduler.runToCompletion(run.id);

    // The worker's calls find the host down: the coordinator's run and job say so.
    await waitFor(() => coord.engine.store.queries.waitingForHost(run.id) !== null, 30_000, 'the run to show waiting for host');
    const waiting = await coord.engine.service.getRun({ runId: run.id });
    expect(waiting.run.waitingForHost).toMatchObject({ host: 'srv0/m' });
    expect(waiting.jobs[0]!.waitingForHost).toMatchObject({ host: 'srv0/m' });

    servers.push(await startOpenAIServer({ port, delayMs: 5 }));
    const final = await done;

    expect(final.status).toBe('failed');
    const detail = await coord.engine.service.getRun({ runId: run.id });
    expect(detail.run.waitingForHost).toBeNull();
    expect(detail.jobs.map((j) => [j.status, j.waitingForHost, j.workerId])).toEqual([['failed', null, 'outage-w']]);
    expect(detail.run.failedVignettes).toBe(1);
    expect(detail.failures.map((f) => [f.vignetteId, f.vignetteIndex, f.model, f.epoch, f.attempts, f.code])).toEqual([
      ['v4', 4, 'm', 1, 6, 'server_error'],
    ]);
    expect(detail.failures[0]!.message).toMatch(/500/);
    expect(final.error).toMatch(/1 vignettes failed: v4 \(m@1\): .*500/);
    expect(coord.engine.store.queries.runResults(run.id).map((r) => r.vignetteId).sort()).toEqual(['v0', 'v1', 'v2', 'v3']);
  }, 90_000);
});
