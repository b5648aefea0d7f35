/**
 * Two schedulers in two real processes race to claim 200 queued runs from one SQLite file: each run
 * is claimed exactly once, and both win some. The pauses between claims are drawn from a seeded
 * generator (PANOPTES_TEST_SEED draws others; a failure says its seed).
 * Runs on: Node (tests).
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Store } from '../../core/store/store.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { tempDir } from '../helpers/temp.js';

const storeModule = pathToFileURL(resolve('dist/core/store/store.js')).href;

/**
 * A scheduler in another process: says "ready" once it listens, waits for "go" on stdin, then
 * claims runs until none is left, pausing between claims as the test drew for it.
 */
const CLAIMER = `
import { Store } from ${JSON.stringify(storeModule)};
const store = new Store(process.argv[1]);
const pauses = JSON.parse(process.argv[2]);
process.stdin.once('data', async () => {
  const ids = [];
  // Like a real scheduler, do a little between claims (here: yield for up to 2 ms).
  for (let run; (run = store.runs.claimNextRun('claimer-' + process.pid, 60000)); ) {
    ids.push(run.id);
    await new Promise((r) => setTimeout(r, pauses[ids.length % pauses.length]));
  }
  store.close();
  process.stdout.write(JSON.stringify(ids) + '\\n');
});
process.stdout.write('ready\\n');
`;

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

it('two schedulers in two processes racing over 200 queued runs claim each run exactly once', async () => {
  const dbPath = join(tmp.dir, 'race.db');
  const store = new Store(dbPath);
  const options = { concurrency: 4, sampling: {}, privacy: 'strict' as const, skipPromptCache: false, shareCacheAcrossEpochs: false };
  for (let i = 0; i < 200; i++) {
    const id = `run${String(i).padStart(3, '0')}`;
    store.runs.beginStaging(id);
    store.runs.stageVignettes(id, [{ index: 0, id: 'v', prompt: 'p' }]);
    store.runs.insertRun({ id, manifestPath: '/m', models: ['m'], epochs: 1, vignetteCount: 1, options });
  }
  store.close();

  const random = seededRandom('claim race');
  const children = [0, 1].map(() => {
    const pauses = Array.from({ length: 200 }, () => random.between(0, 2));
    const child = spawn(process.execPath, ['--input-type=module', '-e', CLAIMER, dbPath, JSON.stringify(pauses)], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const ready = () => out.startsWith('ready\n');
    const done = new Promise<string[]>((res, rej) =>
      child.on('exit', (code) => (code === 0 ? res(JSON.parse(out.slice('ready\n'.length)) as string[]) : rej(new Error(`claimer exited ${code}`)))),
    );
    return { child, ready, done };
  });
  // Started together once both have loaded the store and listen: neither gets a head start.
  for (const deadline = Date.now() + 30_000; !children.every((c) => c.ready()); await new Promise((r) => setTimeout(r, 10))) {
    if (Date.now() > deadline || children.some((c) => c.child.exitCode !== null)) throw new Error('the claimers did not both start within 30 s');
  }
  for (const c of children) c.child.stdin.end('go\n');
  const [a, b] = await Promise.all(children.map((c) => c.done));

  const all = [...a!, ...b!];
  expect(all).toHaveLength(200);
  expect(new Set(all).size).toBe(200);
  // Both processes really competed (neither got everything).
  expect(a!.length).toBeGreaterThan(0);
  expect(b!.length).toBeGreaterThan(0);
  const check = new Store(dbPath);
  expect(check.queries.listRuns({ status: 'running', limit: 1000 })).toHaveLength(200);
  check.close();
});
