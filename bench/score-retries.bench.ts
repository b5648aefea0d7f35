/**
 * Scoring with retries on hard fails: 2 models (`mock-strong` 0.8, `mock-weak` 0.6) x 5 epochs x
 * 10,000 vignettes scored by `match` with `retryOnHardFail: 2`, through the durable score queue in a
 * process of its own (see stored-run-scoring.ts for what is reported). Every hard fail is posed to
 * the embedded mock (5 ms a call) again, so the wall time is mostly the retries' calls, 16 at once.
 * Then the report of the scorer over the first attempts and over the final ones, timed: the final
 * report reads each score's last retry through attempt_scores' key.
 * Runs on: Node.
 */
import type { Engine } from '../core/service/engine.js';
import { scoringBench } from './stored-run-scoring.js';
import { round } from './support.js';

async function reports(engine: Engine, runId: string): Promise<Record<string, unknown>> {
  const timed = async (attempt: 'first' | 'final') => {
    const t0 = performance.now();
    const report = await engine.service.report({ runId, attempt });
    return { ms: round(performance.now() - t0, 0), means: report.models.map((m) => round(m.mean, 4)) };
  };
  const retries = await engine.service.stats({ runId });
  return {
    retry_calls: retries.retries.reduce((n, m) => n + m.calls, 0),
    report_first: await timed('first'),
    report_final: await timed('final'),
  };
}

await scoringBench({
  self: import.meta.url,
  vignettes: Number(process.env.BENCH_SCORE_VIGNETTES ?? 10_000),
  scorers: { scorers: [{ name: 'exact', type: 'match', retryOnHardFail: 2 }] },
  target: { peak_rss_mb: 300 },
  after: reports,
});
