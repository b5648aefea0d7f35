/**
 * Durable scoring: `panoptes score` killed with SIGKILL (a real child process) once scores are
 * landing, `panoptes resume` killed too if it is still scoring, then `panoptes resume` to the end:
 * every (record, scorer version, judge) has exactly one score, the counters match, and the values
 * are the known-accuracy ground truth.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { targetOf, writeStoredRun } from '../../bench/stored-run.js';
import { answersTarget } from '../../core/models/providers/known-accuracy.js';
import { Store } from '../../core/store/store.js';
import { runCli, startCli } from '../helpers/cli.js';
import { killWhileScoring } from '../helpers/kill-while-scoring.js';
import { tempDir } from '../helpers/temp.js';

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

const VIGNETTES = 3000;
const EPOCHS = 2;
const MODELS = [
  { model: 'mock-strong', accuracy: 0.8 },
  { model: 'mock-weak', accuracy: 0.6 },
];
const RECORDS = VIGNETTES * EPOCHS * MODELS.length;

it('kill -9 during scoring, then resume: every score exactly once', async () => {
  const dataDir = join(tmp.dir, 'data');
  const dbPath = join(dataDir, 'panoptes.db');
  expect(writeStoredRun(dataDir, { runId: 'rkill', vignettes: VIGNETTES, epochs: EPOCHS, models: MODELS })).toBe(RECORDS);
  const scorers = [
    { name: 'exact', type: 'match' },
    { name: 'choice', type: 'choice' },
    ...Array.from({ length: 10 }, (_, i) => ({ name: `words${i}`, type: 'words', max: i + 1 })),
  ];
  const file = join(tmp.dir, 'scorers.json');
  writeFileSync(file, JSON.stringify({ scorers }));
  const total = RECORDS * scorers.length;

  const killed: boolean[] = [];
  killed.push(await killWhileScoring(startCli(['score', 'rkill', '--scorers', file, '--data-dir', dataDir]), dbPath, total));
  killed.push(await killWhileScoring(startCli(['resume', '--data-dir', dataDir]), dbPath, total));
  expect(killed[0]).toBe(true);

  const final = await runCli(['resume', '--data-dir', dataDir]);
  expect(final.stderr).toBe('resuming 1 run(s)\n');
  expect(final.code).toBe(0);

  const store = new Store(dbPath);
  try {
    const perScorer = store.db
      .prepare(
        `SELECT s.name, rs.done_count AS done, rs.failed_count AS failed, COUNT(sc.seq) AS rows, COUNT(DISTINCT sc.seq) AS records, SUM(sc.value) AS total
         FROM run_scorers rs JOIN scorers s ON s.id = rs.scorer_id LEFT JOIN scores sc ON sc.scorer_id = rs.scorer_id
         WHERE rs.run_id = 'rkill' GROUP BY rs.scorer_id ORDER BY rs.position`,
      )
      .all() as Array<{ name: string; done: number; failed: number; rows: number; records: number; total: number }>;
    expect(perScorer.map((s) => s.name)).toEqual(scorers.map((s) => s.name));
    for (const s of perScorer) expect(s).toMatchObject({ done: RECORDS, failed: 0, rows: RECORDS, records: RECORDS });

    let hits = 0;
    for (const { model, accuracy } of MODELS) {
      for (let e = 1; e <= EPOCHS; e++) for (let i = 0; i < VIGNETTES; i++) if (answersTarget(model, `v${i}`, e, accuracy)) hits += 1;
    }
    expect(perScorer[0]!.total).toBe(hits);
    // A wrong answer is another letter, so choice agrees with match on every record.
    expect(perScorer[1]!.total).toBe(hits);
    expect(targetOf(7)).toBe('C');
    expect(store.integrityCheck()).toBe('ok');
  } finally {
    store.close();
  }
}, 120_000);
