/**
 * Staged templates on real `panoptes worker` processes over TCP (127.0.0.1, port 0): a fan-out and
 * a judge loop run on the worker, every call comes back with its record and lands in stage_answers
 * as in a local run; and a worker SIGKILLed mid-template loses nothing that finished: each call it
 * reported was stored as it answered, and the worker that takes the job over poses only the calls
 * after them (the provider is a local HTTP server in this process: it counts every call).
 * Runs on: Node (tests).
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogData } from '../../core/models/catalog.js';
import { tempDir } from '../helpers/temp.js';
import { FakeProvider } from '../models/fake-provider.js';
import { CHAIN, scriptedCatalog } from '../templates/scripted-chain.js';
import { assertBuilt, spawnWorker, startCoordinator, stopWorkers, waitFor, type Coordinator, type WorkerProcess } from './harness.js';

const workers: WorkerProcess[] = [];
const coordinators: Coordinator[] = [];
let fake: FakeProvider;
beforeAll(async () => {
  assertBuilt();
  fake = await new FakeProvider().start();
});
afterAll(() => fake.stop());
afterEach(async () => {
  await stopWorkers(workers.splice(0));
  for (const c of coordinators.splice(0)) await c.close();
});

function stagesOf(coord: Coordinator, runId: string): Array<{ idx: number; stage: string; item: number | null; round: number; response: string }> {
  return coord.engine.store.db
    .prepare(`SELECT s.vignette_idx AS idx, s.stage, s.item, s.round, s.response FROM stage_answers s JOIN jobs j ON j.id = s.job_id
              WHERE j.run_id = ? ORDER BY s.vignette_idx, s.call_idx`)
    .all(runId) as Array<{ idx: number; stage: string; item: number | null; round: number; response: string }>;
}

describe('staged templates on remote workers', () => {
  it('runs a fan-out and a judge loop on a worker process, every call kept with its record', async () => {
    const dir = tempDir('panoptes-staged-remote-');
    const catalog = JSON.parse(readFileSync(scriptedCatalog(dir.dir), 'utf8')) as CatalogData;
    dir.cleanup();
    const coord = await startCoordinator({ models: {}, catalog });
    coordinators.push(coord);
    workers.push(spawnWorker({ id: 'stager', catalogPath: coord.catalogPath, port: coord.listener.port, capacity: 1 }));
    await waitFor(() => coord.engine.pool.list().length === 1, 15_000, 'the worker to register');

    const chained = await coord.engine.service.createRun({ manifestPath: coord.manifest(3), models: ['scripted'], epochs: 1, template: CHAIN });
    expect((await coord.engine.scheduler.runToCompletion(chained.id)).status).toBe('done');
    expect(coord.engine.store.queries.jobs(chained.id).map((j) => j.workerId)).toEqual(['stager']);
    const page = await coord.engine.service.responses({ runId: chained.id, limit: 10 });
    expect(page.items.map((r) => r.response)).toEqual(Array(3).fill('summary of reviewed alpha\n\nreviewed beta\n\nreviewed gamma'));
    expect(stagesOf(coord, chained.id).filter((s) => s.idx === 0).map((s) => [s.stage, s.item])).toEqual([
      ['map', null], ['review', 0], ['review', 1], ['review', 2], ['synthesize', null],
    ]);

    const judged = await coord.engine.service.createRun({
      manifestPath: coord.manifest(2, 'judged.jsonl'),
      models: ['scripted'],
      epochs: 1,
      template: `name: judged
stages:
  - name: answer
    prompt: "JUDGED {{vignette.prompt}}"
    judge:
      maxRounds: 3
      scorers:
        - { name: verdict-heading, type: sections, headings: [Verdict] }
`,
    });
    expect((await coord.engine.scheduler.runToCompletion(judged.id)).status).toBe('done');
    expect(stagesOf(coord, judged.id).filter((s) => s.idx === 0).map((s) => [s.round, s.response])).toEqual([
      [1, 'no heading at all'],
      [2, '## Verdict\nfixed on the second round'],
    ]);
    // Nothing waits half-done once the records landed.
    expect(coord.engine.store.db.prepare(`SELECT COUNT(*) AS n FROM finished_stages`).get()).toEqual({ n: 0 });
  });

  it('a worker SIGKILLed mid-template: the next worker goes on from the first unfinished call', async () => {
    fake.always('remote-chain', { kind: 'ok', text: '["alpha","beta","gamma"]', inputTokens: 10, outputTokens: 5, delayMs: 120 });
    const coord = await startCoordinator({
      models: {},
      catalog: {
        providers: { fake: { kind: 'openai', baseUrl: `${fake.url}/v1`, trainsOnData: false, timeoutMs: 5000 } },
        models: { chained: { hosts: [{ provider: 'fake', model: 'remote-chain', contextWindow: 32000 }] } },
      } as CatalogData,
      listener: { heartbeatMs: 150 },
    });
    coordinators.push(coord);
    const first = spawnWorker({ id: 'doomed', catalogPath: coord.catalogPath, port: coord.listener.port, capacity: 1, callConcurrency: 1 });
    workers.push(first);
    await waitFor(() => coord.engine.pool.list().length === 1, 15_000, 'the first worker to register');

    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(3), models: ['chained'], epochs: 1, template: CHAIN, skipPromptCache: true });
    const done = coord.engine.scheduler.runToCompletion(run.id);
    // One call at a time: vignette 0 takes calls 1-5, vignette 1 calls 6-10; killed as call 8 arrives.
    await waitFor(() => fake.count('remote-chain') >= 8, 20_000, 'the eighth call');
    first.child.kill('SIGKILL');
    await first.exited;
    await waitFor(() => coord.engine.pool.list().every((w) => !w.alive) || coord.engine.pool.list().length === 0, 10_000, 'the worker to be lost');
    const stored = coord.engine.store.db
      .prepare(`SELECT v.prompt, s.stage, s.item FROM (SELECT job_id, vignette_idx, stage, item FROM stage_answers UNION ALL
                  SELECT job_id, vignette_idx, stage, item FROM finished_stages) s
                JOIN jobs j ON j.id = s.job_id JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx WHERE j.run_id = ?`)
      .all(run.id) as { prompt: string; stage: string; item: number | null }[];
    const pending = coord.engine.store.db.prepare(`SELECT COUNT(*) AS n FROM finished_stages`).get() as { n: number };
    expect(pending.n).toBeGreaterThanOrEqual(1);

    workers.push(spawnWorker({ id: 'heir', catalogPath: coord.catalogPath, port: coord.listener.port, capacity: 1, callConcurrency: 1 }));
    const final = await done;
    expect(final.status).toBe('done');

    const posed = new Map<string, number>();
    for (const a of fake.arrivals.filter((x) => x.model === 'remote-chain')) {
      const text = (a.body.messages as { content: string }[]).at(-1)!.content;
      posed.set(text, (posed.get(text) ?? 0) + 1);
    }
    const storedPrompts = stored
      .filter((r) => r.stage !== 'synthesize')
      .map((r) => (r.stage === 'map' ? `MAP: ${r.prompt}` : `REVIEW ${['alpha', 'beta', 'gamma'][r.item!]} of ${r.prompt}`));
    expect(storedPrompts.length).toBeGreaterThanOrEqual(6);
    for (const p of storedPrompts) expect(posed.get(p), p).toBe(1);
    // 15 calls, 13 distinct prompts (the three synthesize prompts read the same reviews); at most the one in flight at the kill was posed twice.
    expect(posed.size).toBe(13);
    expect(fake.count('remote-chain')).toBeLessThanOrEqual(16);

    const counts = stagesOf(coord, run.id).reduce((m, s) => m.set(s.idx, (m.get(s.idx) ?? 0) + 1), new Map<number, number>());
    expect([...counts.values()]).toEqual([5, 5, 5]);
    const usage = coord.engine.store.queries.usageByModel(run.id);
    expect(usage.map((u) => [u.model, u.calls, u.inputTokens, u.outputTokens])).toEqual([['chained', 3, 150, 75]]);
    expect(coord.engine.store.db.prepare(`SELECT COUNT(*) AS n FROM finished_stages`).get()).toEqual({ n: 0 });
  }, 60_000);
});
