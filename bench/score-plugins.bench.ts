/**
 * Code plugins: how many calls a second a trivial plugin takes, and a stored run re-scored with it.
 * First, 100,000 records go straight to one plugin's `score` (QuickJS in the plugin's thread, records
 * travelling in batches), 1,000 in flight at a time: plugin calls a second. Then a finished run of
 * 2 models x 5 epochs x 10,000 vignettes (100,000 records) is scored with the same plugin through the
 * durable score queue, in a process of its own (see stored-run-scoring.ts for what is reported).
 * Runs on: Node.
 */
import { codeScorerBuilder } from '../core/scoring/plugin/code-scorer.js';
import { ScorerRegistry } from '../core/scoring/scorer-registry.js';
import type { ScoringConfig } from '../core/scoring/scoring-config.js';
import { scoringBench } from './stored-run-scoring.js';
import { round } from './support.js';

const CALLS = Number(process.env.BENCH_PLUGIN_CALLS ?? 100_000);
const IN_FLIGHT = 1000;
const TRIVIAL: ScoringConfig = { scorers: [{ name: 'nonempty', type: 'code', code: 'function score(input) { return input.response.length > 0; }' }] };

/** Plugin calls a second, straight to the scorer (the first call, which starts the thread, not counted). */
async function callsPerSecond(): Promise<Record<string, unknown>> {
  const registry = new ScorerRegistry();
  registry.register('code', codeScorerBuilder({ network: false }));
  const scorer = registry.build(TRIVIAL.scorers[0]!, 'scorers.0').scorer;
  const input = (i: number) => ({ runId: 'b', model: 'mock-strong', epoch: 1, vignette: { id: `v${i}`, prompt: `Question ${i}?`, target: 'B' }, response: `Answer: ${'ABCDE'[i % 5]}`, calls: { privacy: 'strict' as const, skipPromptCache: false } });
  await scorer.score(input(0));
  const t0 = performance.now();
  let passed = 0;
  for (let start = 0; start < CALLS; start += IN_FLIGHT) {
    const wave = await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, CALLS - start) }, (_, k) => scorer.score(input(start + k))));
    for (const [v] of wave) if (v!.passed) passed += 1;
  }
  const s = (performance.now() - t0) / 1000;
  await scorer.close?.();
  return { plugin_calls: CALLS, plugin_calls_passed: passed, plugin_calls_s: round(s, 2), plugin_calls_per_s: Math.round(CALLS / s) };
}

await scoringBench({
  self: import.meta.url,
  vignettes: Number(process.env.BENCH_SCORE_VIGNETTES ?? 10_000),
  scorers: TRIVIAL,
  target: {},
  before: callsPerSecond,
});
