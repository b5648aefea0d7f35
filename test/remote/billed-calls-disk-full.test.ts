/**
 * A remote worker's billed calls when the coordinator's disk is full: the coordinator's data folder
 * is a real tmpfs (root only; skipped elsewhere, as mounting needs it), filled while the worker's
 * first call is at the provider. Every later call the worker asks to count is refused in one
 * sentence naming the database's disk and never reaches the provider; the frames the coordinator
 * cannot store end the worker's job, not its connection; once space returns, the run taken up
 * again ends with the calls counted equal to what the provider was asked.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogData } from '../../core/models/catalog.js';
import { sweepUsage } from '../../core/store/billed-calls.js';
import { tempDir } from '../helpers/temp.js';
import { fillDisk, mountTmpfs, onTmpfs, tmpfsMountable, unmountTmpfs } from '../helpers/tmpfs.js';
import { useFakeProvider } from '../models/fake-provider.js';
import { assertBuilt, spawnWorker, startCoordinator, stopWorkers, tallyLogger, waitFor, type WorkerProcess } from './harness.js';

describe.skipIf(!tmpfsMountable)(onTmpfs("a remote worker's billed calls on the coordinator's full disk"), () => {
  const fake = useFakeProvider();
  const workers: WorkerProcess[] = [];
  beforeAll(() => assertBuilt());
  afterEach(async () => {
    await stopWorkers(workers.splice(0));
  });

  function catalog(): CatalogData {
    return {
      providers: { fake: { kind: 'openai', baseUrl: `${fake.url}/v1`, trainsOnData: false, timeoutMs: 5000 } },
      models: { paid: { hosts: [{ provider: 'fake', model: 'paid-model', contextWindow: 32000, inputPerMTok: 1, outputPerMTok: 2 }] } },
    } as CatalogData;
  }

  it('refuses every call it cannot count, naming the disk, and never makes it; after space returns, counted equals asked', async () => {
    const tmp = tempDir('panoptes-remote-full-');
    const dataDir = join(tmp.dir, 'data');
    mkdirSync(dataDir);
    mountTmpfs(dataDir, '8m');
    const filler = join(dataDir, 'filler');
    try {
      fake.always('paid-model', { kind: 'ok', text: 'an answer', inputTokens: 7, outputTokens: 3 });
      // The first call is counted, then fills the coordinator's disk while it is at the provider.
      fake.next('paid-model', { kind: 'ok', text: 'an answer', inputTokens: 7, outputTokens: 3, onArrival: () => fillDisk(filler) });
      const log = tallyLogger('warn');
      const full = await startCoordinator({ dir: tmp.dir, models: {}, catalog: catalog(), maxAttempts: 1, leaseMs: 500, logger: log.logger });
      let runId: string;
      try {
        // One call in flight at a time: what the provider sees after the fill is exactly what slipped past the count.
        workers.push(spawnWorker({ id: 'filling', catalogPath: full.catalogPath, port: full.listener.port, capacity: 1, callConcurrency: 1 }));
        await waitFor(() => full.engine.pool.list().length === 1, 15_000, 'the worker to register');
        const run = await full.engine.service.createRun({ manifestPath: full.manifest(6), models: ['paid'], epochs: 1, skipPromptCache: true });
        runId = run.id;
        // Nothing more can be stored: the run stops in one sentence naming the disk, and is left to be taken up again.
        await expect(full.engine.runToEnd(run.id)).rejects.toMatchObject({
          code: 'disk_full',
          message: expect.stringContaining(`no space left on the disk holding ${join(dataDir, 'panoptes.db')}`) as unknown as string,
        });
        expect(fake.count('paid-model')).toBe(1);
        // Each refused call named the disk on the worker's side too.
        // The full disk is the coordinator's, not the worker's fault: its job stopped, its connection stayed.
        expect(log.count(/could not be stored; its job stops/)).toBeGreaterThanOrEqual(1);
        expect(log.count(/worker connection lost/)).toBe(0);
        expect(full.engine.pool.list().map((w) => w.id)).toEqual(['filling']);
      } finally {
        await stopWorkers(workers.splice(0));
        await full.close();
      }

      rmSync(filler);
      const roomy = await startCoordinator({ dir: tmp.dir, models: {}, catalog: catalog(), maxAttempts: 3, leaseMs: 500 });
      try {
        workers.push(spawnWorker({ id: 'roomy', catalogPath: roomy.catalogPath, port: roomy.listener.port, capacity: 1, callConcurrency: 1 }));
        await waitFor(() => roomy.engine.pool.list().length === 1, 15_000, 'the worker to register');
        await roomy.engine.finishAll([]);
        expect((await roomy.engine.service.getRun({ runId })).run.status).toBe('done');
        // The first call's record could not land: it is asked again, and both calls stay counted.
        expect(fake.count('paid-model')).toBe(7);
        expect(sweepUsage(roomy.engine.store, runId)).toEqual([{ model: 'paid', calls: 7 }]);
        const stats = await roomy.engine.service.stats({ runId });
        expect(stats.sweepCalls).toEqual([{ model: 'paid', asked: 7, unrecorded: 1 }]);
      } finally {
        await stopWorkers(workers.splice(0));
        await roomy.close();
      }
    } finally {
      unmountTmpfs(dataDir);
      tmp.cleanup();
    }
  }, 90_000);
});
