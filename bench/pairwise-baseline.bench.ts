/**
 * What reading a pairwise judge's baseline answers costs the scorekeeper on a large run: a
 * finished run of 2 models (`mock-strong`, `mock-weak`) x 5 epochs x 100,000 vignettes (1,000,000
 * records) is written straight to a fresh database, then every page of 1,000 records is read as the
 * worker reads it (`recordsToScore`), and the baseline model's answers beside it (`baselines.of`,
 * one query per page, after a turn of the event loop). Reports the totals of each kind of read and
 * the longest single read, in wall and CPU time: each holds the event loop on its own.
 *   npm run bench -- pairwise
 * Runs on: Node.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databasePath } from '../core/paths.js';
import { ScoreStore } from '../core/store/score-store.js';
import { Store } from '../core/store/store.js';
import { writeStoredRun } from './stored-run.js';
import { round } from './support.js';

const VIGNETTES = 100_000;
const EPOCHS = 5;
const PAGE = 1000;
const RUN_ID = 'rpair';

interface Timing {
  total_ms: number;
  /** The longest single read, in wall time and in this process's CPU time (the machine may be shared). */
  longest_wall_ms: number;
  longest_cpu_ms: number;
  reads: number;
}

/** Times each call of `read`. */
class Timer {
  private total = 0;
  private wall = 0;
  private cpu = 0;
  private n = 0;

  time<T>(read: () => T): T {
    const t = performance.now();
    const c = process.cpuUsage();
    const out = read();
    const used = process.cpuUsage(c);
    const wall = performance.now() - t;
    this.total += wall;
    this.wall = Math.max(this.wall, wall);
    this.cpu = Math.max(this.cpu, (used.user + used.system) / 1000);
    this.n += 1;
    return out;
  }

  result(): Timing {
    return { total_ms: round(this.total, 0), longest_wall_ms: round(this.wall, 1), longest_cpu_ms: round(this.cpu, 1), reads: this.n };
  }
}

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'panoptes-bench-pairwise-'));
  try {
    const records = writeStoredRun(dir, {
      runId: RUN_ID,
      vignettes: VIGNETTES,
      epochs: EPOCHS,
      models: [
        { model: 'mock-strong', accuracy: 0.8 },
        { model: 'mock-weak', accuracy: 0.6 },
      ],
    });
    const store = new Store(databasePath(dir));
    try {
      const scores = new ScoreStore(store);
      const last = scores.lastSeq(RUN_ID);
      // The worker reads a page's records, gives the event loop a turn, then reads their baselines.
      const pages = new Timer();
      const baselines = new Timer();
      let answered = 0;
      for (let cursor = 0; cursor < last; ) {
        const page = pages.time(() => scores.recordsToScore(RUN_ID, cursor, last, PAGE));
        answered += baselines.time(() => scores.baselines.of(RUN_ID, 'mock-weak', cursor, last, PAGE)).filter((b) => b.state === 'answered').length;
        cursor = page.at(-1)!.seq;
      }
      if (answered !== records) throw new Error(`${answered} of ${records} records found their baseline's answer`);
      console.log(JSON.stringify({ records, page_size: PAGE, record_pages: pages.result(), baseline_reads: baselines.result() }));
    } finally {
      store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
