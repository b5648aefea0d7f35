/**
 * Scoring on a disk that fills: the data folder is a real tmpfs of a few MB (root only; skipped
 * elsewhere, as mounting needs it), filled to the last byte once the run is stored. Attaching
 * scorers is refused with one sentence naming the database's disk, attaching nothing; scoring a
 * page that cannot be stored waits for room with a growing pause, calls no model meanwhile, then
 * stops with that sentence; once space returns, scoring again stores every verdict exactly once,
 * the same as an undisturbed run.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeStoredRun } from '../../bench/stored-run.js';
import { openEngine } from '../../core/service/engine.js';
import { initTelemetry } from '../../core/telemetry.js';
import { tempDir } from '../helpers/temp.js';
import { fillDisk, mountTmpfs, onTmpfs, tmpfsMountable, unmountTmpfs } from '../helpers/tmpfs.js';
import { startOpenAIServer, type ServerProcess } from '../outages/openai-server.js';

initTelemetry({ defaultLevel: 'silent' });

const VIGNETTES = 200;
const RECORDS = VIGNETTES * 2;
const MODELS = [
  { model: 'mock-strong', accuracy: 0.8 },
  { model: 'mock-weak', accuracy: 0.6 },
];

describe.skipIf(!tmpfsMountable)(onTmpfs('scoring on a full disk'), () => {
  let tmp: ReturnType<typeof tempDir>;
  let judge: ServerProcess;
  beforeAll(async () => {
    tmp = tempDir();
    judge = await startOpenAIServer({ delayMs: 1 });
  });
  afterAll(async () => {
    await judge.kill();
    tmp.cleanup();
  });

  function engineOn(dataDir: string) {
    const catalog = join(tmp.dir, 'catalog.json');
    execFileSync('sh', ['-c', `cat > ${catalog}`], {
      input: JSON.stringify({
        providers: { fake: { kind: 'openai', baseUrl: `http://127.0.0.1:${judge.port}/v1`, trainsOnData: false, timeoutMs: 10_000 } },
        models: { j: { hosts: [{ provider: 'fake', model: 'j', contextWindow: 8192, inputPerMTok: 0, outputPerMTok: 0 }] } },
      }),
    });
    return openEngine({ dataDir, catalogPaths: [catalog], tickMs: 20, scoringDiskPatienceMs: 1500 });
  }
  const SCORERS = { scorers: [{ name: 'exact', type: 'match' as const }, { name: 'judged', type: 'judge' as const, judges: ['j'], rubric: 'Right?' }] };

  /** Every stored verdict, in a stable order. */
  const verdicts = (e: ReturnType<typeof engineOn>) =>
    e.store.db.prepare(`SELECT s.name, sc.seq, sc.judge, sc.value, sc.passed, sc.explanation, sc.failed FROM scores sc JOIN scorers s ON s.id = sc.scorer_id ORDER BY s.name, sc.seq, sc.judge`).all();

  it('attach and scoring stop with one sentence naming the disk; scoring again after space returns stores every verdict once', async () => {
    const calm = join(tmp.dir, 'calm');
    writeStoredRun(calm, { runId: 'rfull', vignettes: VIGNETTES, epochs: 1, models: MODELS });
    const undisturbed = engineOn(calm);
    await undisturbed.service.scoreRun({ runId: 'rfull', scorers: SCORERS });
    await undisturbed.scoring.finish('rfull');
    const expected = verdicts(undisturbed);
    expect(expected).toHaveLength(2 * RECORDS);
    await undisturbed.close();

    const dataDir = join(tmp.dir, 'full');
    mkdirSync(dataDir);
    // Room for SQLite's write-ahead log at its checkpoint size (1,000 pages, 4 MB) once the filler goes:
    // every judge call is counted in its own commit before it is made.
    mountTmpfs(dataDir, '8m');
    try {
      writeStoredRun(dataDir, { runId: 'rfull', vignettes: VIGNETTES, epochs: 1, models: MODELS });
      let e = engineOn(dataDir);
      const filler = join(dataDir, 'filler');
      fillDisk(filler);
      const dbPath = join(dataDir, 'panoptes.db');

      // Attach: refused, nothing attached.
      const before = judge.requests();
      await expect(e.service.scoreRun({ runId: 'rfull', scorers: SCORERS })).rejects.toMatchObject({
        code: 'disk_full',
        message: `no space left on the disk holding ${dbPath}: the scorers could not be attached to run rfull; free some space and try again`,
      });
      expect((await e.service.scoringStatus({ runId: 'rfull' })).scorers).toEqual([]);

      // Room for the attach, not for a page of verdicts: the first page cannot be stored.
      rmSync(filler);
      const reserve = join(dataDir, 'reserve');
      execFileSync('dd', ['if=/dev/zero', `of=${reserve}`, 'bs=1k', 'count=48'], { stdio: 'ignore' });
      fillDisk(filler);
      rmSync(reserve);
      await e.service.scoreRun({ runId: 'rfull', scorers: { scorers: [SCORERS.scorers[1]!] } });
      e.scoring.start();
      await expect(e.scoring.finish('rfull')).rejects.toMatchObject({
        code: 'disk_full',
        message: `no space left on the disk holding ${dbPath}: scoring stopped after 2 s of waiting for room to store its scores; free some space and try again`,
      });
      // At most the page that could not be stored was asked of the judge.
      expect(judge.requests() - before).toBeLessThanOrEqual(RECORDS);
      await e.close();

      rmSync(filler);
      e = engineOn(dataDir);
      await e.service.scoreRun({ runId: 'rfull', scorers: SCORERS });
      e.scoring.start();
      await e.scoring.finish('rfull');
      expect(verdicts(e)).toEqual(expected);
      await e.close();
    } finally {
      unmountTmpfs(dataDir);
    }
  }, 120_000);
});
