/**
 * The scoring benchmarks' shared run: a finished run of 2 models (`mock-strong`, `mock-weak`) x 5
 * epochs x N vignettes is written straight to a fresh database, then a separate process opens the
 * engine, attaches the given scorers (`scoreRun`) and scores every record through the durable score
 * queue (pages of records read, scored and committed with the cursor), as `panoptes score` does.
 * That process reports its wall time, scores a second, peak RSS, RSS sampled every half second
 * (flat: the last samples no higher than the early ones), the longest event-loop hold, and bytes
 * per stored score (the database's growth over the scores).
 * Runs on: Node.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { databasePath } from '../core/paths.js';
import type { ScoringConfig } from '../core/scoring/scoring-config.js';
import { openEngine, type Engine } from '../core/service/engine.js';
import { initTelemetry } from '../core/telemetry.js';
import { writeStoredRun } from './stored-run.js';
import { peakRssMb, round, rssMb } from './support.js';

const EPOCHS = 5;
const RUN_ID = 'rscore';

export interface ScoringBench {
  /** The benchmark's own module URL: the measured side runs in a process of its own from it. */
  self: string;
  vignettes: number;
  scorers: ScoringConfig;
  target: Record<string, number>;
  /** Measured in the parent before the run is written, and reported beside the run's figures. */
  before?: () => Promise<Record<string, unknown>>;
  /** Measured in the scoring process once every record is scored, and reported beside its figures. */
  after?: (engine: Engine, runId: string) => Promise<Record<string, unknown>>;
}

function dbBytes(dataDir: string): number {
  const db = databasePath(dataDir);
  let n = statSync(db).size;
  try {
    n += statSync(`${db}-wal`).size;
  } catch {
    // no log
  }
  return n;
}

/** The measured side: score the stored run in this process. */
async function score(dataDir: string, bench: ScoringBench): Promise<void> {
  initTelemetry({ defaultLevel: 'warn' });
  const engine = openEngine({ dataDir });
  const before = dbBytes(dataDir);
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(round(rssMb(), 1)), 500);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const t0 = performance.now();
  await engine.service.scoreRun({ runId: RUN_ID, scorers: bench.scorers });
  engine.scoring.start();
  await engine.scoring.finish(RUN_ID);
  const wallMs = performance.now() - t0;
  loop.disable();
  clearInterval(sampler);
  const status = await engine.service.scoringStatus({ runId: RUN_ID });
  const after = bench.after ? await bench.after(engine, RUN_ID) : {};
  await engine.close();
  const scored = status.scorers[0]!.done;
  const half = Math.floor(samples.length / 2);
  const maxOf = (a: number[]) => (a.length ? Math.max(...a) : 0);
  process.stdout.write(
    JSON.stringify({
      records: scored,
      failed: status.scorers[0]!.failed,
      wall_s: round(wallMs / 1000, 2),
      scores_per_s: Math.round(scored / (wallMs / 1000)),
      peak_rss_mb: round(peakRssMb(), 1),
      rss_first_half_max_mb: maxOf(samples.slice(0, half)),
      rss_second_half_max_mb: maxOf(samples.slice(half)),
      rss_samples_mb: samples,
      max_event_loop_hold_ms: round(loop.max / 1e6, 1),
      bytes_per_score: round((dbBytes(dataDir) - before) / scored, 1),
      ...after,
      target: bench.target,
    }) + '\n',
  );
}

/** Runs the benchmark: the measured side when started as it (`--score DIR`), else writes the run and starts it. */
export async function scoringBench(bench: ScoringBench): Promise<void> {
  if (process.argv[2] === '--score') return score(process.argv[3]!, bench);
  const first = bench.before ? await bench.before() : {};
  const dir = mkdtempSync(join(tmpdir(), 'panoptes-bench-score-'));
  try {
    const dataDir = join(dir, 'data');
    const t0 = performance.now();
    const records = writeStoredRun(dataDir, {
      runId: RUN_ID,
      vignettes: bench.vignettes,
      epochs: EPOCHS,
      models: [
        { model: 'mock-strong', accuracy: 0.8 },
        { model: 'mock-weak', accuracy: 0.6 },
      ],
    });
    const seedS = (performance.now() - t0) / 1000;
    const child = spawnSync(process.execPath, [fileURLToPath(bench.self), '--score', dataDir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    const result = JSON.parse(child.stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
    process.stdout.write(JSON.stringify({ ...first, stored_records: records, seed_s: round(seedS, 1), ...result }) + '\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
