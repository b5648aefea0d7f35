/**
 * Fencing under a real stall: the owner of a run is stopped (SIGSTOP) past its lease, `resume`
 * takes the run over, then the owner is continued (SIGCONT). The woken owner must write nothing
 * more — not a record, not a line of responses.jsonl, not the run's status — and exit with the
 * handed-over line; the new owner finishes the run. Twenty rounds, each on a fresh run.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Store } from '../../core/store/store.js';
import { startCli, waitForStderr } from '../helpers/cli.js';
import { tempDir, writeManifest, writeMockCatalog } from '../helpers/temp.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { expectExactlyOnce } from '../helpers/verify.js';

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LEASE_MS = 1500;
const ROUNDS = Number(process.env.TAKEOVER_ROUNDS ?? 20);
/** Far past a round's few seconds (and its 15 s wait for a takeover): reached only by a process that hangs. */
const ROUND_LIMIT_MS = 90_000;

/** The pid in the run's owner id (`host:pid:nonce`), read from the database. */
function ownerPid(dbPath: string, runId: string): number | null {
  const store = new Store(dbPath, { readonly: true });
  try {
    const row = store.db.prepare('SELECT owner FROM runs WHERE id = ?').get(runId) as { owner: string | null } | undefined;
    return row?.owner ? Number(row.owner.split(':')[1]) : null;
  } finally {
    store.close();
  }
}

it(`SIGSTOP of a run's owner past its lease, then takeover by resume: exactly once, the run done (${ROUNDS} rounds)`, async () => {
  const catalog = writeMockCatalog(tmp.dir, { s1: { latencyMs: 20, jitterMs: 10 }, s2: { latencyMs: 30, jitterMs: 10 } });
  const manifest = writeManifest(tmp.dir, 40);
  const env = { PANOPTES_LEASE_MS: String(LEASE_MS) };
  const random = seededRandom('takeover after SIGSTOP');
  let takeovers = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const dataDir = join(tmp.dir, `data-${round}`);
    const dbPath = join(dataDir, 'panoptes.db');
    const common = ['--data-dir', dataDir, '--catalog', catalog];
    // 2 models x 2 epochs x 40 vignettes = 160 calls, ~1.5 s with 4 calls in flight.
    const first = startCli(['run', '--manifest', manifest, '--models', 's1,s2', '--epochs', '2', '--call-concurrency', '4', '--no-progress', ...common], env);
    const [, runId] = await waitForStderr(first, /run (r\w+): 4 jobs/);
    await sleep(random.between(100, 600));
    first.child.kill('SIGSTOP');
    try {
      // Past the lease: the stopped owner renewed it at most LEASE_MS ago.
      await sleep(LEASE_MS + 400);
      const second = startCli(['resume', ...common], env);
      // Continue the stalled owner once the new one holds the run. A stop that caught the owner
      // inside a transaction holds the database's write lock, and nobody can take over until it
      // continues: then it goes on after a while, as a stall ends, and finishes the run itself.
      const deadline = Date.now() + 15_000;
      let takenOver = false;
      while (!(takenOver = ownerPid(dbPath, runId!) === second.child.pid) && Date.now() < deadline) await sleep(25);
      first.child.kill('SIGCONT');
      // A round that does not end is a failure naming both processes, never a worker blocked to the suite's limit.
      const bound = setTimeout(() => {
        for (const c of [first, second]) c.child.kill('SIGKILL');
      }, ROUND_LIMIT_MS);
      const [a, b] = await Promise.all([first.done, second.done]).finally(() => clearTimeout(bound));
      expect([a.signal, b.signal], `round ${round} (seed ${random.seed}) did not end within ${ROUND_LIMIT_MS} ms: owner stderr ${a.stderr.slice(-2000)}; resume stderr ${b.stderr.slice(-2000)}`).toEqual([null, null]);
      expect(b.code, b.stderr).toBe(0);
      if (takenOver) {
        expect(a.code, a.stderr).toBe(3);
        expect(a.stderr).toContain(`run ${runId}: taken over by another panoptes process`);
        takeovers += 1;
      } else expect([0, 3], a.stderr).toContain(a.code);
    } finally {
      first.child.kill('SIGCONT');
    }
    const store = new Store(dbPath, { readonly: true });
    try {
      const run = store.queries.getRun(runId!)!;
      expect(run.status, `round ${round}, seed ${random.seed}`).toBe('done');
      expect(run.error).toBeNull();
      expect(run.doneCount).toBe(run.jobCount);
      expectExactlyOnce(store, dataDir, runId!);
    } finally {
      store.close();
    }
  }
  // Most stops land between transactions: the takeover itself is what this test is about.
  expect(takeovers, `stop points of seed ${random.seed}`).toBeGreaterThanOrEqual(ROUNDS / 2);
}, 600_000);
