/**
 * `panoptes score` on a full disk: the data folder is a real tmpfs (root only; skipped elsewhere,
 * as mounting needs it) filled to the last byte once the run is stored. The command is refused in
 * one line naming the database's disk (opening the database already needs room), with a non-zero
 * exit and no stack. With room to open and attach but not to store a page of verdicts, scoring
 * waits a minute for room (logged once), then stops with one line naming the disk, exit 1. Once
 * space returns, `panoptes score` again ends with the same export as a run scored on a roomy disk.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeStoredRun } from '../../bench/stored-run.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { fillDisk, mountTmpfs, onTmpfs, tmpfsMountable, unmountTmpfs } from '../helpers/tmpfs.js';

const RUN = { runId: 'rfull', vignettes: 50, epochs: 2, models: [{ model: 'mock-strong', accuracy: 0.8 }, { model: 'mock-weak', accuracy: 0.6 }] };

describe.skipIf(!tmpfsMountable)(onTmpfs('panoptes score on a full disk'), () => {
  let tmp: ReturnType<typeof tempDir>;
  let scoring: string;
  beforeAll(() => {
    tmp = tempDir();
    scoring = join(tmp.dir, 'scoring.json');
    writeFileSync(scoring, JSON.stringify({ scorers: [{ name: 'exact', type: 'match' }, { name: 'has-digit', type: 'regex', pattern: '[0-9]' }] }));
  });
  afterAll(() => tmp.cleanup());

  const score = (dataDir: string) => runCli(['score', 'rfull', '--scorers', scoring, '--data-dir', dataDir]);
  /** The run's scores as `panoptes export --format scores` writes them. */
  async function exported(dataDir: string): Promise<string[]> {
    const out = join(tmp.dir, 'scores.jsonl');
    expect((await runCli(['export', 'rfull', '--format', 'scores', '--out', out, '--data-dir', dataDir])).code).toBe(0);
    return readFileSync(out, 'utf8').trim().split('\n');
  }

  /**
   * Scores `run` with `panoptes score` on an 8 MB tmpfs filled to the last byte but `roomKiB`, hands
   * what the command did to `check`, then frees the disk, scores again and compares the export with
   * the same run scored on a roomy disk.
   */
  async function scoreOnFullDisk(name: string, run: typeof RUN, roomKiB: number, check: (result: CliResult, dbPath: string) => void): Promise<void> {
    const calm = join(tmp.dir, `${name}-calm`);
    writeStoredRun(calm, run);
    expect((await score(calm)).code).toBe(0);
    const expected = await exported(calm);
    expect(expected).toHaveLength(2 * run.vignettes * run.epochs * run.models.length);

    const dataDir = join(tmp.dir, name);
    mkdirSync(dataDir);
    mountTmpfs(dataDir, '8m');
    try {
      writeStoredRun(dataDir, run);
      const filler = join(dataDir, 'filler');
      const reserve = join(dataDir, 'reserve');
      if (roomKiB > 0) execFileSync('dd', ['if=/dev/zero', `of=${reserve}`, 'bs=1k', `count=${roomKiB}`], { stdio: 'ignore' });
      fillDisk(filler);
      rmSync(reserve, { force: true });
      check(await score(dataDir), join(dataDir, 'panoptes.db'));

      rmSync(filler);
      expect((await score(dataDir)).code).toBe(0);
      expect(await exported(dataDir)).toEqual(expected);
    } finally {
      unmountTmpfs(dataDir);
    }
  }

  it('refuses in one line naming the disk; scoring again once there is room exports as an undisturbed run', async () => {
    await scoreOnFullDisk('full', RUN, 0, (refused, dbPath) => {
      expect([refused.code, refused.stderr]).toEqual([1, `panoptes: no space left on the disk holding ${dbPath}: the database could not be opened; free some space and try again\n`]);
    });
  }, 120_000);

  it('stops scoring that cannot store its page after a minute, in one line naming the disk, exit 1; scoring again completes it', async () => {
    // Room to open the database and attach the scorers (64 KiB), not for a page of verdicts.
    await scoreOnFullDisk('fills', { ...RUN, vignettes: 1000, epochs: 1 }, 64, (stopped, dbPath) => {
      // The wait is logged once (the log is at warn here), with no stack; the command's own last line names the disk.
      expect(stopped.code).toBe(1);
      const lines = stopped.stderr.trimEnd().split('\n');
      expect(lines.at(-1)).toBe(
        `panoptes: no space left on the disk holding ${dbPath}: scoring stopped after 60 s of waiting for room to store its scores; free some space and try again`,
      );
      expect(lines.filter((l) => l.includes('scoring waits for room'))).toHaveLength(1);
      expect(lines.length).toBeLessThanOrEqual(3);
      expect(stopped.stderr).not.toMatch(/SqliteError|\n\s+at /);
    });
  }, 240_000);
});
