import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Store } from '../../core/store/store.js';
import { runCli, startCli, waitForStderr } from '../helpers/cli.js';
import { tempDir, writeManifest, writeMockCatalog } from '../helpers/temp.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { expectExactlyOnce } from '../helpers/verify.js';

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('kill -9 of `panoptes run` and `resume` at random points, then `resume`: every record exactly once', async () => {
  const random = seededRandom('kill9 run and resume');
  const dataDir = join(tmp.dir, 'data');
  const catalog = writeMockCatalog(tmp.dir, { k1: { latencyMs: 25, jitterMs: 15 }, k2: { latencyMs: 35, jitterMs: 15 } });
  const manifest = writeManifest(tmp.dir, 60);
  const common = ['--data-dir', dataDir, '--catalog', catalog];
  // 2 models x 3 epochs x 60 vignettes = 360 calls, ~3 s with 4 calls in flight.
  const first = startCli(['run', '--manifest', manifest, '--models', 'k1,k2', '--epochs', '3', '--call-concurrency', '4', '--no-progress', ...common]);
  const [, runId] = await waitForStderr(first, /run (r\w+): 6 jobs/);
  await sleep(random.between(200, 1400));
  first.child.kill('SIGKILL');
  expect((await first.done).signal).toBe('SIGKILL');

  let killedMidway = 0;
  for (let round = 0; round < 4; round++) {
    const resume = startCli(['resume', ...common]);
    await sleep(random.between(300, 1200));
    const killed = resume.child.kill('SIGKILL');
    const res = await resume.done;
    if (killed && res.signal === 'SIGKILL') killedMidway += 1;
  }
  expect(killedMidway, `kill points of seed ${random.seed}`).toBeGreaterThan(0);

  const final = await runCli(['resume', '--json', ...common]);
  expect(final.code).toBe(0);

  const store = new Store(join(dataDir, 'panoptes.db'));
  try {
    const run = store.queries.getRun(runId!)!;
    expect(run.status, `seed ${random.seed}`).toBe('done');
    expect(run.doneCount).toBe(run.jobCount);
    expect(run.failedCount).toBe(0);
    expectExactlyOnce(store, dataDir, runId!);
    expect(store.integrityCheck()).toBe('ok');
  } finally {
    store.close();
  }
});
