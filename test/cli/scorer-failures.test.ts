/**
 * A scorer that could not score is loud on the command line: `panoptes run --scorers` and
 * `panoptes score` exit non-zero naming it and why, and `report` says so above the leaderboard.
 * Runs on: Node (tests), spawning the built CLI.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeTargetManifest } from '../helpers/temp.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

function scoringFile(code: string): string {
  const path = join(tmp.dir, 'scorers.json');
  writeFileSync(path, JSON.stringify({ scorers: [{ name: 'picky', type: 'code', code }] }));
  return path;
}

/** What the report says of the record the scorer could not score: one "not scored" count, and why. */
const NOT_SCORED = 'Warning: mock-fast: 1 response (20.0 %) not scored (a judge failed or gave no verdict, or the record could not be scored): left out as missing, not counted as fails.';
const REASON = 'Warning: Last reason a record could not be scored: Error: no verdict for q3 (scoring the run again retries those records).';

it('run --scorers and score exit non-zero naming the scorer and its reason; report says it too', async () => {
  const data = join(tmp.dir, 'data');
  const manifest = writeTargetManifest(tmp.dir, 5);
  const throws = scoringFile(`function score(i) { if (i.vignetteId === 'q3') throw new Error('no verdict for q3'); return 1; }`);
  const run = await runCli(['run', '--manifest', manifest, '--models', 'mock-fast', '--epochs', '1', '--scorers', throws, '--data-dir', data]);
  expect(run.code).toBe(1);
  expect(run.stderr).toContain('scorer picky could not score 1 record: Error: no verdict for q3');
  expect(run.stdout).toContain(NOT_SCORED);
  expect(run.stdout).toContain(REASON);
  const runId = /run (r[0-9a-z]+):/.exec(run.stderr)![1]!;

  const report = await runCli(['report', runId, '--data-dir', data]);
  expect(report.code).toBe(0);
  expect(report.stdout).toContain(NOT_SCORED);
  expect(report.stdout).toContain(REASON);

  const score = await runCli(['score', runId, '--scorers', throws, '--data-dir', data]);
  expect(score.code).toBe(1);
  expect(score.stderr).toContain('scorer picky could not score 1 record: Error: no verdict for q3');

  // A scorer that scored every record is not named (the run's other scorer still is).
  const fine = await runCli(['score', runId, '--scorers', scoringFile('function score() { return 2 > 1; }'), '--data-dir', data]);
  expect(fine.stderr.match(/could not score/g)).toHaveLength(1);
}, 120_000);
