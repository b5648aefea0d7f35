/**
 * The runs list at 10,000 runs, each scored by a judge and retried on hard fails: how long
 * listing the newest 1,000 takes (what the app's Runs view asks for), through the read-only reader
 * `panoptes runs` uses and through the engine's contract, each line with its sweep's, judges' and
 * retries' cost read from the sums the store keeps per run, and the longest the contract's list
 * held the event loop (it hands it back between runs). One stored run is copied in SQL
 * 9,999 times with its jobs and a row each of judge_usage and retry_usage.
 * Runs on: Node.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databasePath } from '../core/paths.js';
import { openEngine } from '../core/service/engine.js';
import { openRunReader } from '../core/service/run-reader.js';
import { Store } from '../core/store/store.js';
import { writeStoredRun } from './stored-run.js';
import { peakRssMb, round } from './support.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 10_000);
const LISTED = 1000;
const REPS = 7;

function copyRuns(dataDir: string): void {
  writeStoredRun(dataDir, { runId: 'r0', vignettes: 1, epochs: 1, models: [{ model: 'mock-strong', accuracy: 0.8 }, { model: 'mock-weak', accuracy: 0.6 }] });
  const store = new Store(databasePath(dataDir));
  const db = store.db;
  const columns = (table: string) => (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name);
  const runCols = columns('runs');
  const jobCols = columns('jobs').filter((c) => c !== 'id');
  const copyRun = db.prepare(`INSERT INTO runs (${runCols.join(', ')}) SELECT ${runCols.map((c) => (c === 'id' ? '@id' : c === 'created_at' ? 'created_at + @i' : c)).join(', ')} FROM runs WHERE id = 'r0'`);
  const copyJobs = db.prepare(`INSERT INTO jobs (${jobCols.join(', ')}) SELECT ${jobCols.map((c) => (c === 'run_id' ? '@id' : c)).join(', ')} FROM jobs WHERE run_id = 'r0'`);
  const judge = db.prepare(`INSERT INTO judge_usage VALUES (@id, 1, 'mock-judge', 4, 4000, 256, 0, 0, 0)`);
  const retry = db.prepare(`INSERT INTO retry_usage VALUES (@id, 1, 'mock-weak', 1, 20, 2)`);
  db.transaction(() => {
    judge.run({ id: 'r0' });
    retry.run({ id: 'r0' });
    for (let i = 1; i < RUNS; i++) {
      const id = `r${i}`;
      copyRun.run({ id, i });
      copyJobs.run({ id });
      judge.run({ id });
      retry.run({ id });
    }
  })();
  store.close();
}

/** Watches the event loop from now: the stop function gives the longest gap between two of its turns. */
function watchLoop(): () => number {
  let last = performance.now();
  let longest = 0;
  let on = true;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return () => {
    on = false;
    return longest;
  };
}

function p50(times: number[]): number {
  return round([...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!, 1);
}

const dir = mkdtempSync(join(tmpdir(), 'panoptes-bench-runs-'));
try {
  const dataDir = join(dir, 'data');
  copyRuns(dataDir);
  const reader = await openRunReader({ dataDir });
  const readerMs: number[] = [];
  let listed = 0;
  for (let i = 0; i < REPS; i++) {
    const t0 = performance.now();
    const runs = reader.listRuns(LISTED);
    readerMs.push(performance.now() - t0);
    listed = runs.length;
    if (!(runs[0]!.totalWithScoringUsd > runs[0]!.estCostUsd)) throw new Error('the judges and retries are missing from the total');
  }
  reader.close();
  const engine = openEngine({ dataDir, readonly: true });
  const serviceMs: number[] = [];
  const holds: number[] = [];
  for (let i = 0; i < REPS; i++) {
    const stop = watchLoop();
    const t0 = performance.now();
    await engine.service.listRuns({ limit: LISTED, archived: 'include' });
    serviceMs.push(performance.now() - t0);
    holds.push(stop());
  }
  await engine.close();
  process.stdout.write(
    JSON.stringify({ runs: RUNS, listed, reader_list_p50_ms: p50(readerMs), service_list_p50_ms: p50(serviceMs), service_longest_hold_ms: round(Math.max(...holds), 1), per_run_us: round((p50(serviceMs) * 1000) / listed, 1), peak_rss_mb: round(peakRssMb(), 0) }) + '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
