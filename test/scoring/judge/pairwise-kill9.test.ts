/**
 * Durable pairwise scoring: `panoptes score` with a pairwise judge (baseline mock-weak, a model of
 * the stored run) killed with SIGKILL (a real child process) once verdicts are landing, then
 * `panoptes resume` to the end: every record has exactly one verdict, none failed, the counters
 * match, and the judge's calls are accounted exactly. Judge calls are counted before they are made
 * (two per record of mock-strong, none for the baseline's own records), so the calls of a page lost
 * at the kill stay counted and its records are asked again: the final count is what the database
 * held at the kill plus two calls for every mock-strong record it had not scored yet.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeStoredRun } from '../../../bench/stored-run.js';
import { Store } from '../../../core/store/store.js';
import { runCli, startCli } from '../../helpers/cli.js';
import { scoreCount } from '../../helpers/kill-while-scoring.js';
import { tempDir } from '../../helpers/temp.js';

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

const VIGNETTES = 1500;
const EPOCHS = 2;
const MODELS = [
  { model: 'mock-strong', accuracy: 0.8 },
  { model: 'mock-weak', accuracy: 0.6 },
];
const RECORDS = VIGNETTES * EPOCHS * MODELS.length;

it('kill -9 during pairwise scoring, then resume: every verdict exactly once', async () => {
  const dataDir = join(tmp.dir, 'data');
  const dbPath = join(dataDir, 'panoptes.db');
  expect(writeStoredRun(dataDir, { runId: 'rpair', vignettes: VIGNETTES, epochs: EPOCHS, models: MODELS })).toBe(RECORDS);
  const file = join(tmp.dir, 'scorers.json');
  writeFileSync(file, JSON.stringify({ scorers: [{ name: 'vs-weak', type: 'judge', mode: 'pairwise', baseline: 'mock-weak', judges: ['mock-judge'], rubric: 'Which is right?' }] }));

  const cli = startCli(['score', 'rpair', '--scorers', file, '--data-dir', dataDir]);
  for (;;) {
    const n = scoreCount(dbPath);
    expect(cli.child.exitCode, 'scoring finished before it could be killed').toBeNull();
    if (n > 0 && n < RECORDS) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  cli.child.kill('SIGKILL');
  expect((await cli.done).signal).toBe('SIGKILL');
  expect(scoreCount(dbPath)).toBeLessThan(RECORDS);
  const atKill = judgeAccount(dbPath);
  // Counted before made: never fewer calls counted than the verdicts that landed needed.
  expect(atKill.calls).toBeGreaterThanOrEqual(2 * atKill.strongScored);

  const final = await runCli(['resume', '--data-dir', dataDir]);
  expect(final.code).toBe(0);

  const store = new Store(dbPath);
  try {
    const s = store.db
      .prepare(
        `SELECT rs.done_count AS done, rs.failed_count AS failed, COUNT(sc.seq) AS rows, COUNT(DISTINCT sc.seq) AS records, SUM(sc.failed) AS failedRows,
           (SELECT SUM(calls) FROM judge_usage WHERE run_id = 'rpair') AS calls
         FROM run_scorers rs LEFT JOIN scores sc ON sc.scorer_id = rs.scorer_id WHERE rs.run_id = 'rpair' GROUP BY rs.scorer_id`,
      )
      .get();
    const strongRecords = VIGNETTES * EPOCHS;
    const calls = atKill.calls + 2 * (strongRecords - atKill.strongScored);
    expect(s).toEqual({ done: RECORDS, failed: 0, rows: RECORDS, records: RECORDS, failedRows: 0, calls });
    expect(calls).toBeGreaterThanOrEqual(2 * strongRecords);
    const strong = store.db
      .prepare(`SELECT AVG(sc.value) AS winRate FROM scores sc JOIN responses r ON r.seq = sc.seq JOIN jobs j ON j.id = r.job_id WHERE j.model = 'mock-strong'`)
      .get() as { winRate: number };
    expect(strong.winRate).toBeGreaterThan(0.5);
    expect(store.integrityCheck()).toBe('ok');
  } finally {
    store.close();
  }
}, 120_000);

/** The judge calls counted so far and how many mock-strong records hold a verdict, read from the killed child's file. */
function judgeAccount(dbPath: string): { calls: number; strongScored: number } {
  const store = new Store(dbPath, { readonly: true });
  try {
    return store.db
      .prepare(
        `SELECT (SELECT COALESCE(SUM(calls), 0) FROM judge_usage WHERE run_id = 'rpair') AS calls,
           (SELECT COUNT(*) FROM scores sc JOIN responses r ON r.seq = sc.seq JOIN jobs j ON j.id = r.job_id WHERE j.model = 'mock-strong') AS strongScored`,
      )
      .get() as { calls: number; strongScored: number };
  } finally {
    store.close();
  }
}
