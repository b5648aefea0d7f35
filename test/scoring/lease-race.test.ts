/**
 * Two `panoptes score` processes on one data folder, a judge slower than the scoring lease (a local
 * OpenAI-compatible server answering after a delay, counting every request) and a short lease
 * (PANOPTES_LEASE_MS): the lease is renewed while a page is scored, so the work is shared instead of
 * flipping between owners: every verdict is stored once, the judge is asked at most 1.2 times per
 * record, and both processes exit.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeStoredRun } from '../../bench/stored-run.js';
import { Store } from '../../core/store/store.js';
import { startCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { startOpenAIServer, type ServerProcess } from '../outages/openai-server.js';

let tmp: ReturnType<typeof tempDir>;
let judge: ServerProcess;
beforeAll(async () => {
  tmp = tempDir();
  judge = await startOpenAIServer({ delayMs: 80 });
});
afterAll(async () => {
  await judge.kill();
  tmp.cleanup();
});

const VIGNETTES = 150;
const RECORDS = VIGNETTES * 2;

it('two processes, a judge slower than the lease: every verdict once, judge calls at most 1.2x the records, both exit', async () => {
  const dataDir = join(tmp.dir, 'data');
  expect(writeStoredRun(dataDir, { runId: 'rlease', vignettes: VIGNETTES, epochs: 1, models: [{ model: 'mock-strong', accuracy: 0.8 }, { model: 'mock-weak', accuracy: 0.6 }] })).toBe(RECORDS);
  // Every judge call reaches the server: the prompt cache would let a second owner catch up for free.
  const seeded = new Store(join(dataDir, 'panoptes.db'));
  seeded.db.prepare(`UPDATE runs SET options = json_set(options, '$.skipPromptCache', json('true'))`).run();
  seeded.close();
  const catalog = join(tmp.dir, 'catalog.json');
  writeFileSync(
    catalog,
    JSON.stringify({
      providers: { fake: { kind: 'openai', baseUrl: `http://127.0.0.1:${judge.port}/v1`, trainsOnData: false, timeoutMs: 10_000 } },
      models: { slowjudge: { hosts: [{ provider: 'fake', model: 'j', contextWindow: 8192, inputPerMTok: 0, outputPerMTok: 0 }] } },
    }),
  );
  const scorers = join(tmp.dir, 'scorers.json');
  writeFileSync(scorers, JSON.stringify({ scorers: [{ name: 'slow', type: 'judge', judges: ['slowjudge'], rubric: 'Is the answer right?' }] }));
  // 300 records at 16 in flight and 80 ms a call: a page takes about 1.5 s, three times the lease.
  const args = ['score', 'rlease', '--scorers', scorers, '--data-dir', dataDir, '--catalog', catalog];
  const env = { PANOPTES_LEASE_MS: '500' };
  const both = [startCli(args, env), startCli(args, env)];
  const bound = setTimeout(() => both.forEach((c) => c.child.kill('SIGKILL')), 90_000);
  const done = await Promise.all(both.map((c) => c.done));
  clearTimeout(bound);
  expect(done.map((d) => [d.signal, d.code]), done.map((d) => d.stderr).join('\n---\n')).toEqual([
    [null, 0],
    [null, 0],
  ]);

  const store = new Store(join(dataDir, 'panoptes.db'), { readonly: true });
  try {
    const rows = store.db.prepare(`SELECT COUNT(*) AS n, COUNT(DISTINCT seq) AS records FROM scores`).get() as { n: number; records: number };
    expect(rows).toEqual({ n: RECORDS, records: RECORDS });
    const usage = store.db.prepare(`SELECT SUM(calls) AS calls FROM judge_usage`).get() as { calls: number };
    // Every call is counted before it is made, those of a page cut short by a lost lease too: the
    // usage is what the judge was asked, more only by a call cut short before its request left
    // (at most one a lane, 16, per process).
    expect(usage.calls).toBeGreaterThanOrEqual(judge.requests());
    expect(usage.calls - judge.requests()).toBeLessThanOrEqual(2 * 16);
  } finally {
    store.close();
  }
  expect(judge.requests()).toBeGreaterThanOrEqual(RECORDS);
  expect(judge.requests()).toBeLessThanOrEqual(1.2 * RECORDS);
}, 120_000);
