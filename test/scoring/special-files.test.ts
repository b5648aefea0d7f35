/**
 * Only regular files are read: a FIFO given as a manifest, a scoring file, a plugin file or a
 * baseline file is refused at once, "not a regular file", where opening it for reading would wait
 * for a writer for ever. A baseline file swapped after attach (a symlink to another file) is
 * refused by the sha256 pinned at attach before a line of it is parsed, so nothing of the other
 * file reaches a stored explanation.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readScoringFile } from '../../core/cli/scoring-file.js';
import { readManifest } from '../../core/manifest.js';
import { readBaselineFile } from '../../core/scoring/judge/baseline-file.js';
import { openRegularFile, openedRealPath } from '../../core/regular-file.js';
import { writeTargetManifest } from '../helpers/temp.js';
import { useTempEngines } from '../helpers/temp-engine.js';

const tmp = useTempEngines();

function fifo(name: string): string {
  const path = join(tmp.dir, name);
  execFileSync('mkfifo', [path]);
  return path;
}

describe('a FIFO is refused at once', () => {
  it('as a scoring file, a plugin file, a baseline file and a manifest', async () => {
    const scoring = fifo('scoring.json');
    await expect(readScoringFile(scoring)).rejects.toThrow(`${scoring}: cannot read the scoring file (not a regular file)`);

    mkdirSync(join(tmp.dir, 'p'));
    const withPlugin = join(tmp.dir, 'p', 'scoring.json');
    writeFileSync(withPlugin, JSON.stringify({ scorers: [{ name: 'len', type: 'code', file: 'plugin.js' }] }));
    execFileSync('mkfifo', [join(tmp.dir, 'p', 'plugin.js')]);
    await expect(readScoringFile(withPlugin)).rejects.toThrow(`${withPlugin}: scorers.0.file: cannot read "plugin.js" (not a regular file)`);

    const baseline = fifo('baseline.jsonl');
    await expect(readBaselineFile(baseline, 'scorers.0.baselineFile')).rejects.toThrow(`scorers.0.baselineFile: cannot read the baseline file "${baseline}" (not a regular file)`);

    const manifest = fifo('manifest.jsonl');
    const readAll = async () => {
      for await (const v of readManifest(manifest)) void v;
    };
    await expect(readAll()).rejects.toThrow(`cannot read manifest ${manifest}: not a regular file`);
  });
});

describe('a baseline file swapped after attach', () => {
  it('is refused by its pinned sha256, and nothing of the file it now points to is stored', async () => {
    const e = tmp.open({ dataDir: join(tmp.dir, 'data'), tickMs: 20 });
    const run = await e.service.createRun({ manifestPath: writeTargetManifest(tmp.dir, 5), models: ['mock-strong'], epochs: 1 });
    await e.scheduler.runToCompletion(run.id);
    const real = join(tmp.dir, 'baseline-real.jsonl');
    writeFileSync(real, Array.from({ length: 5 }, (_, i) => JSON.stringify({ id: `q${i}`, response: 'A' })).join('\n') + '\n');
    const link = join(tmp.dir, 'baseline.jsonl');
    symlinkSync(real, link);
    const secret = join(tmp.dir, 'secret.txt');
    writeFileSync(secret, 'root:x:0:0:SECRET-FIRST-LINE\n');
    const judge = { name: 'vs-file', type: 'judge' as const, mode: 'pairwise' as const, judges: ['mock-judge'], rubric: 'Which is right?', baselineFile: link };
    // Attached and pinned while the link points at the real file; swapped before anything is scored.
    await e.scoring.stop();
    await e.service.scoreRun({ runId: run.id, scorers: { scorers: [judge] } });
    await e.close();
    rmSync(link);
    symlinkSync(secret, link);
    const again = tmp.open({ dataDir: join(tmp.dir, 'data'), tickMs: 20 });
    again.scoring.start();
    await again.scoring.finish(run.id);
    const rows = again.store.db.prepare(`SELECT explanation, failed FROM scores`).all() as { explanation: string; failed: number }[];
    expect(rows).toHaveLength(5);
    for (const r of rows) {
      expect(r.failed).toBe(1);
      expect(r.explanation).toMatch(/no longer has the content this scorer version was made with/);
      expect(r.explanation).not.toContain('SECRET');
    }
  });
});

describe('a file is judged by what was opened', () => {
  it('the real path of an open handle stays the file opened when the link that named it is swapped', async () => {
    const first = join(tmp.dir, 'first.jsonl');
    const second = join(tmp.dir, 'second.jsonl');
    writeFileSync(first, 'a\n');
    writeFileSync(second, 'b\n');
    const link = join(tmp.dir, 'swapped.jsonl');
    symlinkSync(first, link);
    const handle = await openRegularFile(link);
    try {
      rmSync(link);
      symlinkSync(second, link);
      expect(await openedRealPath(handle, link)).toBe(process.platform === 'linux' ? realpathSync(first) : realpathSync(second));
    } finally {
      await handle.close();
    }
  });
});
