/**
 * responses.jsonl on a disk that fills: the run's folder is a real tmpfs of a few KiB, mounted for
 * the test (root only; skipped elsewhere, as mounting needs it). A disk full for a moment heals
 * once space returns: the run ends done with every record once, in order. A disk that stays full
 * past the run's patience fails the run with the reason, every record kept in the database, and
 * retrying the run once space is back finishes the file.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toJsonlLine } from '../../core/export.js';
import { responsesPath } from '../../core/paths.js';
import { openEngine, type Engine } from '../../core/service/engine.js';
import { initTelemetry } from '../../core/telemetry.js';
import { tempDir, writeManifest, writeMockCatalog } from '../helpers/temp.js';
import { expectExactlyOnce } from '../helpers/verify.js';
import { mountTmpfs, onTmpfs, tmpfsMountable, unmountTmpfs } from '../helpers/tmpfs.js';

initTelemetry({ defaultLevel: 'silent' });

describe.skipIf(!tmpfsMountable)(onTmpfs('responses.jsonl on a full disk'), () => {
  let tmp: ReturnType<typeof tempDir>;
  let runs: string;
  let engine: Engine | undefined;
  beforeEach(() => {
    tmp = tempDir();
    runs = join(tmp.dir, 'data', 'runs');
    mkdirSync(runs, { recursive: true });
    mountTmpfs(runs, '24k');
  });
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
    unmountTmpfs(runs);
    tmp.cleanup();
  });

  const start = (logPatienceMs: number) => {
    engine = openEngine({
      dataDir: join(tmp.dir, 'data'),
      catalogPaths: [writeMockCatalog(tmp.dir, { steady: { latencyMs: 1 } })],
      tickMs: 20,
      logPatienceMs,
    });
    return engine;
  };

  /** The file is exactly the run's records, in sequence order, byte for byte. */
  const expectWhole = (e: Engine, runId: string) => {
    expectExactlyOnce(e.store, e.dataDir, runId);
    const expected = e.store.queries.runResults(runId).map((r) => toJsonlLine(r) + '\n').join('');
    expect(readFileSync(responsesPath(e.dataDir, runId), 'utf8')).toBe(expected);
  };

  it('heals once space returns: the run ends done with every record once, in order', async () => {
    const e = start(60_000);
    const run = await e.service.createRun({ manifestPath: writeManifest(tmp.dir, 150), models: ['steady'], epochs: 4, skipPromptCache: true });
    const done = e.scheduler.runToCompletion(run.id);
    // 24 KiB holds about a hundred lines: wait until far more have landed, then give the disk room.
    while (e.store.queries.responseCount(run.id) < 300) await sleep(20);
    mountTmpfs(runs, '8m', true);
    expect((await done).status).toBe('done');
    expectWhole(e, run.id);
  });

  it('fails the run with the reason when the disk stays full, and a retry once there is room finishes the file', async () => {
    const e = start(1_500);
    const run = await e.service.createRun({ manifestPath: writeManifest(tmp.dir, 150), models: ['steady'], epochs: 2, skipPromptCache: true });
    const failed = await e.scheduler.runToCompletion(run.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/could not write .*responses\.jsonl \(.*ENOSPC.*\).*every record is in the database.*--retry-failed/);
    expect(e.store.queries.responseCount(run.id)).toBe(300);
    mountTmpfs(runs, '8m', true);
    await e.service.retryRun({ runId: run.id, scope: 'failed' });
    expect((await e.scheduler.runToCompletion(run.id)).status).toBe('done');
    expectWhole(e, run.id);
  });
});
