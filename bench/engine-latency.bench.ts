/**
 * Engine overhead under latency: 200 vignettes x 2 models x 3 epochs on a 50 ms mock, at most 4
 * model calls in flight. Ideal wall time is calls x latency / 4; reports the ratio. Target <= 1.03.
 * Runs on: Node.
 */
import { join } from 'node:path';
import { benchEngine, round, writeBenchManifest } from './support.js';

const VIGNETTES = 200;
const LATENCY = 50;
const env = benchEngine({ a: { latencyMs: LATENCY }, b: { latencyMs: LATENCY } }, 4);
const manifest = join(env.dir, 'manifest.jsonl');
await writeBenchManifest(manifest, VIGNETTES);

const t0 = performance.now();
const run = await env.engine.service.createRun({ manifestPath: manifest, models: ['a', 'b'], epochs: 3 });
const final = await env.engine.scheduler.runToCompletion(run.id);
const wall = performance.now() - t0;
if (final.status !== 'done') throw new Error(`run ended ${final.status}: ${final.error}`);
const calls = VIGNETTES * 2 * 3;
const ideal = (calls * LATENCY) / 4;
await env.cleanup();
console.log(
  JSON.stringify({
    scenario: '200 x 2 x 3, mock 50 ms, 4 calls in flight',
    calls,
    wall_ms: round(wall, 0),
    ideal_ms: ideal,
    wall_over_ideal: round(wall / ideal, 3),
    target_wall_over_ideal: 1.03,
  }),
);
