/**
 * Retries on hard fails survive a kill -9: `panoptes score` with a `retryOnHardFail` scorer killed
 * with SIGKILL (a real child process) once scores are landing, `panoptes resume` killed too if it
 * is still scoring, then `panoptes resume` to the end. Every (record, attempt) the ground truth
 * asks for is stored exactly once, with its score and the model's own answer for that attempt,
 * and the retries' calls are counted once each; the command line then reports, exports and
 * accounts them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { targetOf, writeStoredRun } from '../../bench/stored-run.js';
import { answersTarget, knownAccuracyAnswer } from '../../core/models/providers/known-accuracy.js';
import type { ScoreReport } from '../../core/scoring/report-shape.js';
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
const RETRIES = 3;
const MODELS = [
  { model: 'mock-strong', accuracy: 0.8 },
  { model: 'mock-weak', accuracy: 0.6 },
];
const RECORDS = VIGNETTES * MODELS.length;

it('kill -9 while retrying hard fails, then resume: every (record, attempt) exactly once', async () => {
  const dataDir = join(tmp.dir, 'data');
  const dbPath = join(dataDir, 'panoptes.db');
  expect(writeStoredRun(dataDir, { runId: 'rretry', vignettes: VIGNETTES, epochs: 1, models: MODELS })).toBe(RECORDS);
  const file = join(tmp.dir, 'scorers.json');
  writeFileSync(file, JSON.stringify({ scorers: [{ name: 'exact', type: 'match', retryOnHardFail: RETRIES }] }));

  const killed: boolean[] = [];
  killed.push(await killWhileScoring(startCli(['score', 'rretry', '--scorers', file, '--data-dir', dataDir]), dbPath, RECORDS));
  killed.push(await killWhileScoring(startCli(['resume', '--data-dir', dataDir]), dbPath, RECORDS));
  expect(killed[0]).toBe(true);
  const final = await runCli(['resume', '--data-dir', dataDir]);
  expect(final.code).toBe(0);

  // The ground truth: each record's attempts, 2 and on while the previous one missed.
  const expected: string[] = [];
  let firstHits = 0;
  let finalHits = 0;
  for (const { model, accuracy } of MODELS) {
    for (let i = 0; i < VIGNETTES; i++) {
      let attempt = 1;
      while (!answersTarget(model, `v${i}`, 1, accuracy, attempt) && attempt <= RETRIES) expected.push(`${model} v${i} ${++attempt}`);
      if (attempt === 1) firstHits += 1;
      if (answersTarget(model, `v${i}`, 1, accuracy, attempt)) finalHits += 1;
    }
  }

  const store = new Store(dbPath);
  try {
    const scores = store.db.prepare(`SELECT COUNT(*) AS n, COUNT(DISTINCT seq) AS records, SUM(value) AS hits FROM scores`).get();
    expect(scores).toEqual({ n: RECORDS, records: RECORDS, hits: firstHits });
    const attempts = store.db
      .prepare(
        `SELECT j.model, v.vignette_id AS id, a.attempt, a.response, sc.value
         FROM retry_attempts a JOIN responses r ON r.seq = a.seq JOIN jobs j ON j.id = r.job_id
           JOIN vignettes v ON v.run_id = j.run_id AND v.idx = r.vignette_idx
           LEFT JOIN attempt_scores sc ON sc.scorer_id = a.scorer_id AND sc.seq = a.seq AND sc.attempt = a.attempt
         ORDER BY j.model, r.vignette_idx, a.attempt`,
      )
      .all() as { model: string; id: string; attempt: number; response: string; value: number | null }[];
    expect(attempts.map((a) => `${a.model} ${a.id} ${a.attempt}`)).toEqual(expected);
    for (const a of attempts) {
      const target = targetOf(Number(a.id.slice(1)));
      const accuracy = MODELS.find((m) => m.model === a.model)!.accuracy;
      expect(a.response).toBe(knownAccuracyAnswer(a.model, a.id, 1, target, accuracy, a.attempt));
      expect(a.value).toBe(a.response === target ? 1 : 0);
    }
    // Every retry call is counted before it is made, so a call a kill cut off is billed and counted
    // though its attempt was posed again: at least one call per stored attempt, and at most a lost
    // page's retries more per kill (16 records, each up to RETRIES calls; see docs/reference/guarantees.md).
    const { calls } = store.db.prepare(`SELECT SUM(calls) AS calls FROM retry_usage`).get() as { calls: number };
    expect(calls).toBeGreaterThanOrEqual(expected.length);
    expect(calls).toBeLessThanOrEqual(expected.length + 16 * RETRIES * killed.filter(Boolean).length);
    expect(store.integrityCheck()).toBe('ok');
  } finally {
    store.close();
  }

  const first = JSON.parse((await runCli(['report', 'rretry', '--json', '--data-dir', dataDir])).stdout) as ScoreReport;
  const last = JSON.parse((await runCli(['report', 'rretry', '--attempt', 'final', '--json', '--data-dir', dataDir])).stdout) as ScoreReport;
  expect([first.attempt, last.attempt]).toEqual(['first', 'final']);
  const hits = (r: ScoreReport) => Math.round(r.models.reduce((s, m) => s + m.mean * m.n, 0));
  expect([hits(first), hits(last)]).toEqual([firstHits, finalHits]);
  const text = await runCli(['report', 'rretry', '--attempt', 'final', '--data-dir', dataDir]);
  expect(text.stdout).toContain("Each record's last attempt after retries on hard fails");
  expect((await runCli(['report', 'rretry', '--attempt', 'last', '--data-dir', dataDir])).stderr).toContain('--attempt must be one of first, final');

  const out = join(tmp.dir, 'scores.jsonl');
  expect((await runCli(['export', 'rretry', '--format', 'scores', '--out', out, '--data-dir', dataDir])).code).toBe(0);
  const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { attempt: number });
  expect(lines.filter((l) => l.attempt === 1)).toHaveLength(RECORDS);
  expect(lines.filter((l) => l.attempt > 1)).toHaveLength(expected.length);

  const stats = await runCli(['stats', '--run', 'rretry', '--data-dir', dataDir]);
  expect(stats.stdout).toContain("retries of hard fails (the candidates' extra calls, apart from the sweep's above):");
  expect(stats.stdout).toMatch(new RegExp(`mock-weak +${expected.filter((e) => e.startsWith('mock-weak ')).length.toLocaleString('en-US')} `));
}, 180_000);
