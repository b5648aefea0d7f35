/**
 * A staged run killed with SIGKILL mid-run and resumed: every record lands exactly once with its
 * five stages, and no stage that was stored before the kill is posed to the provider again (the
 * provider is a local HTTP server in this process, so it counts every call of every process).
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
useFakeChain(15, (chain) => ({ fake, dir, catalog, template: templateFile } = chain));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('SIGKILL mid-run, then resume: every record once with its 5 stages, no stored stage posed again', async () => {
  const manifest = writeManifest(dir, 40);
  const dataDir = join(dir, 'data');
  const common = ['--data-dir', dataDir, '--catalog', catalog];

  const first = startCli(['run', '--manifest', manifest, '--models', 'chained', '--template', templateFile, '--call-concurrency', '4', '--no-progress', ...common]);
  const [, runId] = await waitForStderr(first, /run (r\w+): 1 jobs/);
  // Kill once some records (and their stages) have landed, long before the 200 calls are done.
  for (let i = 0; i < 200 && fake.count(CHAIN_MODEL) < 60; i++) await sleep(25);
  first.child.kill('SIGKILL');
  expect((await first.done).signal).toBe('SIGKILL');

  const before = new Store(join(dataDir, 'panoptes.db'));
  let storedPrompts: string[];
  try {
    const landed = before.db
      .prepare(`SELECT v.prompt AS prompt, s.stage AS stage, s.item AS item FROM stage_answers s JOIN jobs j ON j.id = s.job_id
                JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx WHERE j.run_id = ?`)
      .all(runId!) as { prompt: string; stage: string; item: number | null }[];
    storedPrompts = stagePrompts(landed);
  } finally {
    before.close();
  }
  const killedAt = fake.count(CHAIN_MODEL);
  expect(storedPrompts.length).toBeGreaterThan(0);
  expect(killedAt).toBeLessThan(200);

  const final = await runCli(['resume', ...common]);
  expect(final.code).toBe(0);

  const posed = posedPrompts(fake);
  for (const p of storedPrompts) expect(posed.get(p), p).toBe(1);

  const store = new Store(join(dataDir, 'panoptes.db'));
  try {
    expect(store.queries.getRun(runId!)!.status).toBe('done');
    const counts = store.db
      .prepare(`SELECT COUNT(*) AS n FROM stage_answers s JOIN jobs j ON j.id = s.job_id WHERE j.run_id = ? GROUP BY s.vignette_idx`)
      .all(runId!) as { n: number }[];
    expect(counts).toHaveLength(40);
    expect(counts.every((c) => c.n === 5)).toBe(true);
    const records = store.db.prepare(`SELECT COUNT(*) AS n FROM responses r JOIN jobs j ON j.id = r.job_id WHERE j.run_id = ?`).get(runId!) as { n: number };
    expect(records.n).toBe(40);
  } finally {
    store.close();
  }
});
