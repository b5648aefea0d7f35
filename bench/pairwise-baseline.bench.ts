/**
 * What reading a pairwise judge's baseline answers costs the score worker on a large run: a
 * finished run of 2 models (`mock-strong`, `mock-weak`) x 5 epochs x 100,000 vignettes (1,000,000
 * records) is written straight to a fresh database, then every page of 1,000 records is read as the
 * worker reads it, once alone (`recordsToScore`) and once with the baseline model's answers beside
 * it (`baselines.of`, one query per page). Reports both totals and the longest page (the event
 * loop is held for one page at a time).
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

/** Reads every page of the run through `read`; the total and the longest page, in ms. */
function pages(last: number, read: (after: number) => number): { total_ms: number; longest_page_ms: number; pages: number } {
  let longest = 0;
  let n = 0;
  const t0 = performance.now();
  for (let cursor = 0; cursor < last; ) {
    const t = performance.now();
    cursor = read(cursor);
    longest = Math.max(longest, performance.now() - t);
    n += 1;
  }
  return { total_ms: round(performance.now() - t0, 0), longest_page_ms: round(longest, 1), pages: n };
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
      const alone = pages(last, (after) => scores.recordsToScore(RUN_ID, after, last, PAGE).at(-1)!.seq);
      let answered = 0;
      const paired = pages(last, (after) => {
        const page = scores.recordsToScore(RUN_ID, after, last, PAGE);
        const baselines = scores.baselines.of(RUN_ID, 'mock-weak', after, last, PAGE);
        answered += baselines.filter((b) => b.state === 'answered').length;
        return page.at(-1)!.seq;
      });
      if (answered !== records) throw new Error(`${answered} of ${records} records found their baseline's answer`);
      console.log(JSON.stringify({ records, page_size: PAGE, records_alone: alone, records_with_baselines: paired }));
    } finally {
      store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
