/**
 * The command line never waits on a special file: a FIFO named as `panoptes run`'s manifest, as
 * `panoptes score`'s scoring file, as a plugin file or as a pairwise judge's baseline file (each
 * with no writer, where opening it for reading would wait for ever) is refused at once in one line
 * naming it ("not a regular file"), exit 2. Each command is given 20 s
 * before it is killed, so a hang fails the test instead of holding it.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeStoredRun } from '../../bench/stored-run.js';
import { startCli, type CliResult } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

let tmp: ReturnType<typeof tempDir>;
let dataDir: string;
beforeAll(() => {
  tmp = tempDir();
  dataDir = join(tmp.dir, 'data');
  writeStoredRun(dataDir, { runId: 'rfifo', vignettes: 4, epochs: 1, models: [{ model: 'mock-strong', accuracy: 0.8 }] });
});
afterAll(() => tmp.cleanup());

/** A FIFO at `name` in the test's folder, with no writer. */
function fifo(name: string): string {
  const path = join(tmp.dir, name);
  execFileSync('mkfifo', [path]);
  return path;
}

/** Runs the command, killing it after 20 s (a hang is then a signal, not a passing exit). */
async function bounded(args: string[]): Promise<CliResult> {
  const cli = startCli([...args, '--data-dir', dataDir]);
  const killer = setTimeout(() => cli.child.kill('SIGKILL'), 20_000);
  try {
    return await cli.done;
  } finally {
    clearTimeout(killer);
  }
}

it('refuses a FIFO as manifest, scoring file, plugin file and baseline file at once, in one line naming it', async () => {
  const manifest = fifo('manifest.jsonl');
  const scoring = fifo('scoring.json');
  fifo('plugin.js');
  const baseline = fifo('baseline.jsonl');
  const withPlugin = join(tmp.dir, 'with-plugin.json');
  writeFileSync(withPlugin, JSON.stringify({ scorers: [{ name: 'len', type: 'code', file: 'plugin.js' }] }));
  const withBaseline = join(tmp.dir, 'with-baseline.json');
  writeFileSync(withBaseline, JSON.stringify({ scorers: [{ name: 'vs-file', type: 'judge', mode: 'pairwise', judges: ['mock-judge'], rubric: 'Which is right?', baselineFile: 'baseline.jsonl' }] }));

  const seen = [
    await bounded(['run', '--manifest', manifest, '--models', 'mock-fast', '--epochs', '1']),
    await bounded(['score', 'rfifo', '--scorers', scoring]),
    await bounded(['score', 'rfifo', '--scorers', withPlugin]),
    await bounded(['score', 'rfifo', '--scorers', withBaseline]),
  ];
  expect(seen.map((r) => [r.signal, r.code, r.stderr])).toEqual([
    [null, 2, `panoptes: cannot read manifest ${manifest}: not a regular file\n`],
    [null, 2, `panoptes: ${scoring}: cannot read the scoring file (not a regular file)\n`],
    [null, 2, `panoptes: ${withPlugin}: scorers.0.file: cannot read "plugin.js" (not a regular file)\n`],
    [null, 2, expect.stringMatching(new RegExp(`^panoptes: .*scorers\\.0\\.baselineFile: cannot read the baseline file "${baseline}" \\(not a regular file\\)\\n$`))],
  ]);
});
