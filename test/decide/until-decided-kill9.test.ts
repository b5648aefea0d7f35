/**
 * A real `panoptes run --until-decided` child killed with SIGKILL once batches are landing, then
 * `panoptes resume`: no record is lost or landed twice (the database and responses.jsonl hold each
 * (job, vignette) once, and every vignette posed to a model has its record at every epoch), and
 * the decision is the one an uninterrupted run of the same manifest and order seed makes.
 * Runs on: Node (tests).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DecisionReport } from '../../core/scoring/adaptive-decision.js';
import { Store } from '../../core/store/store.js';
import { runCli, startCli, waitForStderr } from '../helpers/cli.js';
import { tempDir, writeMockCatalog, writeTargetManifest } from '../helpers/temp.js';

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('SIGKILL mid-run, then resume: every record once, and the decision of an uninterrupted run', async () => {
  const catalog = writeMockCatalog(tmp.dir, { keen: { latencyMs: 60, accuracy: 0.8 }, slack: { latencyMs: 60, accuracy: 0.55 } });
  const manifest = writeTargetManifest(tmp.dir, 400);
  const scorers = join(tmp.dir, 'scorers.json');
  writeFileSync(scorers, JSON.stringify({ scorers: [{ name: 'exact', type: 'match' }] }));
  const dataDir = join(tmp.dir, 'data');
  const common = ['--data-dir', dataDir, '--catalog', catalog];
  const args = ['run', '--manifest', manifest, '--models', 'keen,slack', '--epochs', '2', '--scorers', scorers, '--until-decided', '--order-seed', '11', '--batch', '10', '--no-progress', ...common];

  const first = startCli(args);
  const [, runId] = await waitForStderr(first, /run (r\w+): 4 jobs, at most 1600 calls/);
  const log = join(dataDir, 'runs', runId!, 'responses.jsonl');
  // Killed once a few batches have landed in the database (40 records a batch), long before the
  // run decides (280 calls). The database, not responses.jsonl, is watched: the file takes records
  // only once they are fsynced, at most once a second, so it may lag a whole short run behind.
  const landed = () => {
    const store = new Store(join(dataDir, 'panoptes.db'), { readonly: true });
    try {
      return store.db.prepare<[string], { n: number }>(`SELECT COUNT(*) AS n FROM responses r JOIN jobs j ON j.id = r.job_id WHERE j.run_id = ?`).get(runId!)!.n;
    } finally {
      store.close();
    }
  };
  for (let i = 0; i < 1000 && landed() < 60; i++) await sleep(10);
  first.child.kill('SIGKILL');
  expect((await first.done).signal).toBe('SIGKILL');
  const landedBeforeKill = landed();
  expect(landedBeforeKill).toBeGreaterThanOrEqual(60);

  const resumed = await runCli(['resume', ...common]);
  expect(resumed.code, resumed.stderr).toBe(0);
  const decided = await runCli(['decide', runId!, '--json', ...common]);
  expect(decided.code, decided.stderr).toBe(0);
  const after = JSON.parse(decided.stdout) as DecisionReport;
  expect(after.pairs[0]).toMatchObject({ status: 'decided', winner: 'keen' });

  const store = new Store(join(dataDir, 'panoptes.db'), { readonly: true });
  try {
    expect(store.queries.getRun(runId!)!.status).toBe('done');
    const rows = store.db
      .prepare<[string], { model: string; epoch: number; n: number; distinct_n: number }>(
        `SELECT j.model, j.epoch, COUNT(*) AS n, COUNT(DISTINCT r.vignette_idx) AS distinct_n FROM responses r JOIN jobs j ON j.id = r.job_id
          WHERE j.run_id = ? GROUP BY j.id ORDER BY j.model, j.epoch`,
      )
      .all(runId!);
    // Each job holds exactly the vignettes posed to its model (none lost), each once (none twice).
    for (const r of rows) {
      const posed = after.models.find((m) => m.model === r.model)!.vignettes;
      expect(r, `${r.model}@${r.epoch}`).toMatchObject({ n: posed, distinct_n: posed });
    }
    expect(rows).toHaveLength(4);
    const total = rows.reduce((s, r) => s + r.n, 0);
    expect(total).toBe(after.calls);
    expect(total).toBeGreaterThan(landedBeforeKill);
    // responses.jsonl: every record once.
    const logged = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { model: string; epoch: number; vignette_id: string });
    expect(logged).toHaveLength(total);
    expect(new Set(logged.map((l) => `${l.model}/${l.epoch}/${l.vignette_id}`)).size).toBe(total);
  } finally {
    store.close();
  }

  // The same manifest and order seed, never interrupted: the same decision, at the same n, with the same calls.
  const clean = await runCli(args.filter((a) => a !== '--no-progress').concat('--json'));
  expect(clean.code, clean.stderr).toBe(0);
  const uninterrupted = (JSON.parse(clean.stdout) as { decision: DecisionReport }).decision;
  expect(uninterrupted.pairs).toEqual(after.pairs);
  const calls = (r: DecisionReport) => r.models.map((m) => [m.model, m.vignettes, m.calls, m.calls_saved]);
  expect(calls(uninterrupted)).toEqual(calls(after));
  expect(uninterrupted.run_id).not.toBe(after.run_id);
  // Read back by `decide` like the resumed one: the same decision (dollars aside: they follow each run's own usage).
  const again = JSON.parse((await runCli(['decide', uninterrupted.run_id, '--json', ...common])).stdout) as DecisionReport;
  const decision = (r: DecisionReport) => ({ ...r, run_id: '', usd_saved: 0, models: calls(r) });
  expect(decision(again)).toEqual(decision(after));
});
