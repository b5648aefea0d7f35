/**
 * Stage-level resume: a staged run SIGKILLed between two stages of a vignette's chain, then
 * resumed. The vignette starts again from its first unfinished call: no call that finished before
 * the kill reaches the provider again (the provider is a local HTTP server in this process, so it
 * counts the calls of every process), the records equal those of an uninterrupted run, and the
 * usage counts every call exactly once. The prompt cache is off, so nothing but the stored stages
 * could spare a call.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { Store } from '../../core/store/store.js';
import { runCli, startCli, waitForStderr } from '../helpers/cli.js';
import { writeManifest } from '../helpers/temp.js';
import type { FakeProvider } from '../models/fake-provider.js';
import { CHAIN_MODEL, posedPrompts, stagePrompts, useFakeChain } from './fake-chain.js';

let fake: FakeProvider;
let dir: string;
let catalog: string;
let templateFile: string;
useFakeChain(120, (chain) => ({ fake, dir, catalog, template: templateFile } = chain));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Landed {
  idx: number;
  response: string;
  input: number;
  output: number;
  stages: string;
}

function landed(dataDir: string, runId: string): { records: Landed[]; jobInput: number; jobOutput: number; pending: number } {
  const store = new Store(join(dataDir, 'panoptes.db'));
  try {
    const records = store.db
      .prepare(
        `SELECT r.vignette_idx AS idx, r.response, r.input_tokens AS input, r.output_tokens AS output,
           (SELECT json_group_array(json_array(s.stage, s.item, s.round, s.response, s.input_tokens, s.output_tokens, s.host, s.cached))
              FROM (SELECT * FROM stage_answers s WHERE s.job_id = r.job_id AND s.vignette_idx = r.vignette_idx ORDER BY s.call_idx) s) AS stages
         FROM responses r JOIN jobs j ON j.id = r.job_id WHERE j.run_id = ? ORDER BY r.vignette_idx`,
      )
      .all(runId) as Landed[];
    const job = store.db.prepare(`SELECT SUM(input_tokens) AS i, SUM(output_tokens) AS o FROM jobs WHERE run_id = ?`).get(runId) as { i: number; o: number };
    const pending = store.db.prepare(`SELECT COUNT(*) AS n FROM finished_stages f JOIN jobs j ON j.id = f.job_id WHERE j.run_id = ?`).get(runId) as { n: number };
    return { records, jobInput: job.i, jobOutput: job.o, pending: pending.n };
  } finally {
    store.close();
  }
}

it('SIGKILL between two stages, then resume: the vignette goes on from its first unfinished call, and the records equal an uninterrupted run', async () => {
  const manifest = writeManifest(dir, 3);
  const runArgs = (dataDir: string) => [
    'run', '--manifest', manifest, '--models', 'chained', '--template', templateFile, '--call-concurrency', '1', '--concurrency', '1',
    '--skip-prompt-cache', '--no-progress', '--data-dir', dataDir, '--catalog', catalog,
  ];

  // One call at a time: vignette 0 takes calls 1-5, vignette 1 calls 6-10. Killed as call 8 arrives,
  // vignette 1 has its map and first review stored, and no record.
  const dataDir = join(dir, 'killed');
  const first = startCli(runArgs(dataDir));
  const [, runId] = await waitForStderr(first, /run (r\w+): 1 jobs/);
  for (let i = 0; i < 400 && fake.count(CHAIN_MODEL) < 8; i++) await sleep(10);
  first.child.kill('SIGKILL');
  expect((await first.done).signal).toBe('SIGKILL');
  const killedAt = fake.count(CHAIN_MODEL);
  const before = landed(dataDir, runId!);
  // The kill fell mid-template: calls of a vignette without a record are stored.
  expect(before.pending).toBeGreaterThanOrEqual(1);
  expect(before.records.length).toBeLessThan(3);
  // The prompts of every call stored before the kill, with a record or not: none may be posed again.
  const stored = (() => {
    const store = new Store(join(dataDir, 'panoptes.db'));
    try {
      return store.db
        .prepare(
          `SELECT v.prompt, s.stage, s.item FROM (SELECT job_id, vignette_idx, stage, item FROM stage_answers UNION ALL
             SELECT job_id, vignette_idx, stage, item FROM finished_stages) s
           JOIN jobs j ON j.id = s.job_id JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx WHERE j.run_id = ?`,
        )
        .all(runId!) as { prompt: string; stage: string; item: number | null }[];
    } finally {
      store.close();
    }
  })();
  const storedPrompts = stagePrompts(stored);
  expect(storedPrompts.length).toBeGreaterThanOrEqual(6);

  const resumed = await runCli(['resume', '--data-dir', dataDir, '--catalog', catalog]);
  expect(resumed.code, resumed.stderr).toBe(0);
  const afterResume = fake.count(CHAIN_MODEL);

  // Every prompt of the run reached the provider exactly once: 3 vignettes x 5 calls, whatever the kill cut.
  const posed = posedPrompts(fake);
  // A call in flight at the kill (its answer never stored) is the only one posed twice.
  expect(afterResume).toBeLessThanOrEqual(15 + 1);
  expect([...posed.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(1);
  expect(posed.size).toBe(15);
  for (const p of storedPrompts) expect(posed.get(p), p).toBe(1);
  expect(killedAt).toBeGreaterThanOrEqual(8);

  // The same run uninterrupted, in a data folder of its own.
  const cleanDir = join(dir, 'clean');
  const clean = await runCli(runArgs(cleanDir));
  expect(clean.code, clean.stderr).toBe(0);
  const cleanRun = /run (r\w+)/.exec(clean.stderr)![1]!;

  const killed = landed(dataDir, runId!);
  const reference = landed(cleanDir, cleanRun);
  expect(killed.records).toHaveLength(3);
  expect(killed.records).toEqual(reference.records);
  // Usage: each of the 5 calls of each record once (10 in, 5 out a call), in the record and the job's totals.
  for (const r of killed.records) expect([r.input, r.output, (JSON.parse(r.stages) as unknown[]).length]).toEqual([50, 25, 5]);
  expect([killed.jobInput, killed.jobOutput]).toEqual([150, 75]);
  // Landed records took their stored calls with them.
  expect(killed.pending).toBe(0);
}, 60_000);
