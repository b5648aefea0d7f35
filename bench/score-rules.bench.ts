/**
 * Re-scoring a stored run with rules (target: 1,000,000 records in under 20 s, peak RSS under
 * 300 MB and flat): 2 models x 5 epochs x 100,000 vignettes scored with the `match` scorer through
 * the durable score queue, in a process of its own (see stored-run-scoring.ts for what is reported).
 * Runs on: Node.
 */
import { scoringBench } from './stored-run-scoring.js';

await scoringBench({
  self: import.meta.url,
  vignettes: Number(process.env.BENCH_SCORE_VIGNETTES ?? 100_000),
  scorers: { scorers: [{ name: 'exact', type: 'match' }] },
  target: { wall_s: 20, peak_rss_mb: 300 },
});
