/**
 * Engine throughput: 2,000 vignettes x 2 models x 1 epoch on the 0 ms mock, at most 4 model calls
 * in flight, SQLite and responses.jsonl written, a UI-like event subscriber attached. Reports calls
 * per second end to end (manifest read to run done) and the event-loop delay p99 meanwhile (the
 * Electron main process hosts this engine). Targets: >= 5,000 calls/s; p99 delay < 20 ms.
 * Runs on: Node.
 */
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { benchEngine, peakRssMb, round, writeBenchManifest } from './support.js';

const VIGNETTES = 2000;
const env = benchEngine({ a: { latencyMs: 0 }, b: { latencyMs: 0 } }, 4);

// Warm up once (JIT, SQLite page cache), then measure the best of three.
const results: Array<{ callsPerSec: number; runOnlyCallsPerSec: number; loopP99Ms: number; loopMaxMs: number }> = [];
for (let i = 0; i < 4; i++) {
  // Fresh prompts each round: every call is a real (mock) call, none a prompt-cache hit.
  const manifest = join(env.dir, `manifest-${i}.jsonl`);
  await writeBenchManifest(manifest, VIGNETTES, ` (round ${i})`);
  let events = 0;
  const unsubscribe = env.engine.service.subscribe(() => (events += 1));
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const t0 = performance.now();
  const run = await env.engine.service.createRun({ manifestPath: manifest, models: ['a', 'b'], epochs: 1 });
  const t1 = performance.now();
  const final = await env.engine.scheduler.runToCompletion(run.id);
  const t2 = performance.now();
  loop.disable();
  unsubscribe();
  if (final.status !== 'done') throw new Error(`run ended ${final.status}: ${final.error}`);
  const calls = VIGNETTES * 2;
  if (i > 0) {
    results.push({
      callsPerSec: calls / ((t2 - t0) / 1000),
      runOnlyCallsPerSec: calls / ((t2 - t1) / 1000),
      loopP99Ms: loop.percentile(99) / 1e6,
      loopMaxMs: loop.max / 1e6,
    });
  }
  void events;
}
const best = results.reduce((a, b) => (b.callsPerSec > a.callsPerSec ? b : a));
const worstP99 = Math.max(...results.map((r) => r.loopP99Ms));
await env.cleanup();
console.log(
  JSON.stringify({
    scenario: '2000 x 2 x 1, mock 0 ms, 4 calls in flight',
    calls: VIGNETTES * 2,
    calls_per_sec: round(best.callsPerSec, 0),
    run_only_calls_per_sec: round(best.runOnlyCallsPerSec, 0),
    all_calls_per_sec: results.map((r) => round(r.callsPerSec, 0)),
    event_loop_delay_p99_ms: round(worstP99),
    event_loop_delay_max_ms: round(Math.max(...results.map((r) => r.loopMaxMs))),
    peak_rss_mb: round(peakRssMb(), 1),
    target_calls_per_sec: 5000,
    target_event_loop_p99_ms: 20,
  }),
);
