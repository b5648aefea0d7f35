/**
 * A staged template's judge loop on a full disk: the data folder is a real tmpfs (root only;
 * skipped elsewhere, as mounting needs it). A judge call that cannot be counted is refused in one
 * sentence naming the database's disk and never reaches its provider. In a real run the disk fills
 * while the candidate's call is at the provider, after it was counted: the judge is never asked and
 * nothing of it is counted; once space returns, the run taken up again poses the vignette again, its
 * judge is asked once, and the run's usage holds every call the providers were asked.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeStoredRun } from '../../bench/stored-run.js';
import { templateJudgeBilling } from '../../core/service/stage-judge.js';
import { openEngine } from '../../core/service/engine.js';
import { Store } from '../../core/store/store.js';
import { initTelemetry } from '../../core/telemetry.js';
import { tempDir, writeManifest } from '../helpers/temp.js';
import { fillDisk, mountTmpfs, onTmpfs, tmpfsMountable, unmountTmpfs } from '../helpers/tmpfs.js';
import { useFakeProvider } from '../models/fake-provider.js';

initTelemetry({ defaultLevel: 'silent' });

/** One round: the candidate answers, then the referee is asked once. */
const TEMPLATE = `name: refereed
stages:
  - name: answer
    prompt: "ANSWER {{vignette.prompt}}"
    judge:
      maxRounds: 1
      scorers:
        - { name: referee-says, type: judge, judges: [referee], rubric: "Is it right?" }
`;

describe.skipIf(!tmpfsMountable)(onTmpfs("a template's judge loop on a full disk"), () => {
  const fake = useFakeProvider();
  let tmp: ReturnType<typeof tempDir>;
  let dataDir: string;
  beforeAll(() => {
    tmp = tempDir();
  });
  afterAll(() => tmp.cleanup());

  /** A fresh data folder on its own 8 MB tmpfs for `body`, unmounted after it. */
  async function onSmallDisk(name: string, body: () => Promise<void>): Promise<void> {
    dataDir = join(tmp.dir, name);
    mkdirSync(dataDir);
    mountTmpfs(dataDir, '8m');
    try {
      await body();
    } finally {
      unmountTmpfs(dataDir);
    }
  }

  it('refuses a judge call it cannot count, naming the database, and never makes it', async () => {
    await onSmallDisk('unit', async () => {
      writeStoredRun(dataDir, { runId: 'rj', vignettes: 1, epochs: 1, models: [{ model: 'cand', accuracy: 0.5 }] });
      const store = new Store(join(dataDir, 'panoptes.db'));
      try {
        fillDisk(join(dataDir, 'filler'));
        let asked = 0;
        const judge = templateJudgeBilling(store)({
          serves: () => true,
          generate: () => {
            asked += 1;
            return Promise.resolve({ text: 'A', usage: { inputTokens: 1, outputTokens: 1 }, host: 'referees/r', cached: false, latencyMs: 1 });
          },
        });
        await expect(
          judge.generate({ model: 'referee', messages: [{ role: 'user', content: 'Q?' }], sampling: {}, privacy: 'strict', skipPromptCache: true, runId: 'rj' }),
        ).rejects.toMatchObject({
          code: 'disk_full',
          message: `no space left on the disk holding ${join(dataDir, 'panoptes.db')}: counting a template's judge call; free some space and try again`,
        });
        expect(asked).toBe(0);
      } finally {
        store.close();
      }
    });
  });

  it('asks no judge while the disk is full; once space returns the run ends with every call counted once', async () => {
    const catalog = join(tmp.dir, 'catalog.json');
    const host = (model: string) => ({ hosts: [{ provider: 'fake', model, contextWindow: 32000, inputPerMTok: 1, outputPerMTok: 2 }] });
    writeFileSync(catalog, JSON.stringify({
      providers: { fake: { kind: 'openai', baseUrl: `${fake.url}/v1`, trainsOnData: false, timeoutMs: 5000 } },
      models: { cand: host('cand-model'), referee: host('judge-model') },
    }));
    await onSmallDisk('run', async () => {
      const filler = join(dataDir, 'filler');
      const options = { dataDir, catalogPaths: [catalog], tickMs: 20, leaseMs: 500 };
      fake.always('cand-model', { kind: 'ok', text: 'my answer' });
      fake.next('cand-model', { kind: 'ok', text: 'my answer', onArrival: () => fillDisk(filler) });
      fake.always('judge-model', { kind: 'ok', text: '{"reason": "fine", "score": "pass"}', inputTokens: 20, outputTokens: 4 });

      const full = openEngine(options);
      let runId: string;
      try {
        const run = await full.service.createRun({ manifestPath: writeManifest(tmp.dir, 1), models: ['cand'], epochs: 1, template: TEMPLATE, skipPromptCache: true });
        runId = run.id;
        // Nothing can be stored, the run's failure included: one sentence naming the disk, and the run left to be taken up again.
        await expect(full.runToEnd(run.id)).rejects.toMatchObject({
          code: 'disk_full',
          message: `no space left on the disk holding ${join(dataDir, 'panoptes.db')}: run ${run.id} stopped and could not be marked failed; resume it once there is room; free some space and try again`,
        });
        expect((await full.service.getRun({ runId: run.id })).run.status).toBe('running');
        expect(fake.count('cand-model')).toBe(1);
        expect(fake.count('judge-model')).toBe(0);
      } finally {
        await full.close();
      }

      rmSync(filler);
      const roomy = openEngine(options);
      try {
        expect((await roomy.service.stats({ runId })).judges).toEqual([]);
        await roomy.finishAll([]);
        expect((await roomy.service.getRun({ runId })).run.status).toBe('done');
        expect(fake.count('cand-model')).toBe(2);
        expect(fake.count('judge-model')).toBe(1);
        const stats = await roomy.service.stats({ runId });
        expect(stats.judges).toEqual([expect.objectContaining({ model: 'referee', calls: 1, inputTokens: 20, outputTokens: 4 })]);
        expect(stats.sweepCalls).toEqual([expect.objectContaining({ model: 'cand', asked: 2 })]);
      } finally {
        await roomy.close();
      }
    });
  }, 60_000);
});
