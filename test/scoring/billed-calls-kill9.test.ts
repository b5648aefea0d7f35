/**
 * Every call a provider was asked is in the usage after kill -9. Local OpenAI-compatible servers
 * (real child processes, counting every request they receive) answer the candidate model and the
 * judge; `panoptes score` and `panoptes run` children are killed with SIGKILL at seeded points
 * (PANOPTES_TEST_SEED replays them), started again, and run to the end. Then the stored usage is
 * compared with what the servers were asked:
 * - judge calls and retries of hard fails are counted before they are made: equal, whatever page
 *   the kills lost (the same records are scored again, and asked again), but for a call counted
 *   at a kill whose request had not left yet; only the tokens of the calls in flight at a kill (one
 *   a lane) are unknown;
 * - the sweep's records miss at most the calls in flight and the answers not yet landed at a kill
 *   (call concurrency + the lander's batch of 64); its ledger, counted before each request leaves,
 *   misses none: it holds every call the server was asked, plus at most the calls counted at a
 *   kill whose requests had not left yet (call concurrency per kill).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { writeStoredRun } from '../../bench/stored-run.js';
import { openEngine } from '../../core/service/engine.js';
import { Store } from '../../core/store/store.js';
import { initTelemetry } from '../../core/telemetry.js';
import { runCli } from '../helpers/cli.js';
import { killAtSeededPoint, readCount, useCountedProviders, writeQuestions } from '../helpers/kill-at-seeded-point.js';
import { seededRandom } from '../helpers/seeded-random.js';

initTelemetry({ defaultLevel: 'silent' });

const providers = useCountedProviders();

const KILLS = 3;
/** Scores in flight at once within a page: the scorekeeper's default. */
const LANES = 16;

it('judge calls and retries after kill -9 at seeded points: the stored usage equals what the providers were asked', async () => {
  const random = seededRandom('billed-calls: score');
  const dataDir = join(providers.dir, 'scored');
  const dbPath = join(dataDir, 'panoptes.db');
  const RECORDS = writeStoredRun(dataDir, { runId: 'rbill', vignettes: 1200, epochs: 1, models: [{ model: 'cand', accuracy: 0.5 }] });
  // Every call reaches a server: the prompt cache would answer a page scored again for free.
  const seeded = new Store(dbPath);
  seeded.db.prepare(`UPDATE runs SET options = json_set(options, '$.skipPromptCache', json('true'))`).run();
  seeded.close();
  const scorers = join(providers.dir, 'scorers.json');
  // The servers' answers never match a target: every hard fail of `exact` is retried twice; the judge reads no verdict in them.
  writeFileSync(scorers, JSON.stringify({ scorers: [{ name: 'exact', type: 'match', retryOnHardFail: 2 }, { name: 'judged', type: 'judge', judges: ['fj'], rubric: 'Right?' }] }));
  const args = ['score', 'rbill', '--scorers', scorers, '--data-dir', dataDir, '--catalog', providers.catalog()];

  let killed = 0;
  for (let k = 0; k < KILLS; k++) {
    if (await killAtSeededPoint(args, () => readCount(dbPath, `SELECT COUNT(*) AS n FROM scores`), random.between(0, 1500))) killed += 1;
  }
  const last = await runCli(args);
  expect(last.code, `seed ${random.seed}: ${last.stderr}`).toBe(0);
  expect(killed, `seed ${random.seed}: the kills landed while scoring`).toBeGreaterThan(0);

  const e = openEngine({ dataDir, catalogPaths: [providers.catalog()], readonly: true });
  try {
    expect(readCount(dbPath, `SELECT COUNT(*) AS n FROM scores`)).toBe(2 * RECORDS);
    const status = await e.service.scoringStatus({ runId: 'rbill' });
    const stats = await e.service.stats({ runId: 'rbill' });
    const judged = status.judgeUsage.reduce((n, u) => n + u.calls - u.cachedCalls, 0);
    const retried = stats.retries.reduce((n, u) => n + u.calls, 0);
    // More calls than one undisturbed pass: the kills' lost pages were asked again, and are counted.
    expect(providers.judge.requests(), `seed ${random.seed}`).toBeGreaterThanOrEqual(RECORDS);
    // Equal but for a call counted at a kill whose request had not left yet (one a lane at most):
    // never fewer than were asked.
    const over = { judged: judged - providers.judge.requests(), retried: retried - providers.candidate.requests() };
    expect(Math.min(over.judged, over.retried), `seed ${random.seed}: ${JSON.stringify(over)}`).toBeGreaterThanOrEqual(0);
    expect(over.judged + over.retried, `seed ${random.seed}: ${JSON.stringify(over)}`).toBeLessThanOrEqual(LANES * killed);
    // Tokens come with the answers (the servers give 3 out a call): a call in flight at a kill is
    // counted, but its tokens are never known, at most one call a lane (16) per kill.
    const tokensKnown = (tokens: number, calls: number) => tokens <= 3 * calls && tokens >= 3 * (calls - LANES * killed);
    expect(tokensKnown(status.judgeUsage[0]!.outputTokens, judged), `seed ${random.seed}`).toBe(true);
    expect(tokensKnown(stats.retries[0]!.outputTokens, retried), `seed ${random.seed}`).toBe(true);
  } finally {
    await e.close();
  }
}, 240_000);

it("the sweep's calls after kill -9 at seeded points: the records miss at most the calls in flight and not yet landed at each kill, the ledger none", async () => {
  const random = seededRandom('billed-calls: run');
  const dataDir = join(providers.dir, 'swept');
  const dbPath = join(dataDir, 'panoptes.db');
  const VIGNETTES = 600;
  const manifest = writeQuestions(join(providers.dir, 'manifest.jsonl'), VIGNETTES);
  const CALLS_IN_FLIGHT = 4;
  const LANDER_BATCH = 64;
  const before = providers.candidate.requests();
  const run = ['run', '--manifest', manifest, '--models', 'cand', '--call-concurrency', String(CALLS_IN_FLIGHT), '--skip-prompt-cache', '--no-progress', '--data-dir', dataDir, '--catalog', providers.catalog()];
  // The call bound is the process's: each resume is given it again.
  const resume = ['resume', '--call-concurrency', String(CALLS_IN_FLIGHT), '--data-dir', dataDir, '--catalog', providers.catalog()];
  let killed = 0;
  for (let k = 0; k < KILLS; k++) {
    if (await killAtSeededPoint(k === 0 ? run : resume, () => readCount(dbPath, `SELECT COUNT(*) AS n FROM responses`), random.between(0, 1000))) killed += 1;
  }
  const last = await runCli(resume);
  expect(last.code, `seed ${random.seed}: ${last.stderr}`).toBe(0);
  expect(killed, `seed ${random.seed}: the kills landed while the sweep ran`).toBeGreaterThan(0);

  const e = openEngine({ dataDir, catalogPaths: [providers.catalog()], readonly: true });
  try {
    const stats = await e.service.stats({});
    expect(stats.totalCalls).toBe(VIGNETTES);
    const asked = providers.candidate.requests() - before;
    expect(asked, `seed ${random.seed}`).toBeGreaterThanOrEqual(stats.totalCalls);
    expect(asked - stats.totalCalls, `seed ${random.seed}`).toBeLessThanOrEqual(killed * (CALLS_IN_FLIGHT + LANDER_BATCH));
    // The ledger: never fewer than the server was asked, and over it only by calls counted at a kill before they left.
    const counted = stats.totalSweepCallsAsked;
    expect(counted - asked, `seed ${random.seed}: ${counted} counted, ${asked} asked`).toBeGreaterThanOrEqual(0);
    expect(counted - asked, `seed ${random.seed}: ${counted} counted, ${asked} asked`).toBeLessThanOrEqual(killed * CALLS_IN_FLIGHT);
    expect(stats.sweepCalls).toEqual([{ model: 'cand', asked: counted, unrecorded: counted - VIGNETTES }]);
    expect(stats.totalSweepCallsUnrecorded).toBe(counted - VIGNETTES);
  } finally {
    await e.close();
  }
}, 240_000);
