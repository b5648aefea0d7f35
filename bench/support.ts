/**
 * Shared set-up for the engine benchmarks: a temp data dir, a mock catalog, a manifest, an engine
 * with a given bound on model calls in flight, and the measurements every benchmark reports.
 * Runs on: Node.
 */
import { createWriteStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { openEngine, type Engine } from '../core/service/engine.js';
import { initTelemetry } from '../core/telemetry.js';

export interface BenchEnv {
  dir: string;
  dataDir: string;
  engine: Engine;
  cleanup(): Promise<void>;
}

/** A manifest of `count` vignettes; `tag` makes the prompts differ from another manifest's, so no call is answered from the prompt cache. */
export async function writeBenchManifest(path: string, count: number, tag = ''): Promise<void> {
  const out = createWriteStream(path);
  for (let i = 0; i < count; i++) {
    const line = JSON.stringify({ id: `v${i}`, prompt: `Vignette ${i}${tag}: a patient presents with symptom ${i % 97}. What next?` }) + '\n';
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** An engine over a fresh temp dir whose catalog has one mock model per entry of `models`. */
export function benchEngine(models: Record<string, { latencyMs: number }>, callConcurrency: number): BenchEnv {
  initTelemetry({ defaultLevel: 'warn' });
  const dir = mkdtempSync(join(tmpdir(), 'panoptes-bench-'));
  const catalog = join(dir, 'catalog.json');
  writeFileSync(
    catalog,
    JSON.stringify({
      providers: { bench: { kind: 'mock', trainsOnData: false } },
      models: Object.fromEntries(
        Object.entries(models).map(([id, o]) => [id, { hosts: [{ provider: 'bench', model: id, contextWindow: 1_000_000, options: { latencyMs: o.latencyMs } }] }]),
      ),
    }),
  );
  const dataDir = join(dir, 'data');
  const engine = openEngine({ dataDir, catalogPaths: [catalog], callConcurrency });
  return {
    dir,
    dataDir,
    engine,
    async cleanup() {
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Peak resident memory of this process so far, in MB (the kernel's high-water mark). */
export function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024;
}

export function rssMb(): number {
  return process.memoryUsage().rss / 1024 / 1024;
}

export function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
