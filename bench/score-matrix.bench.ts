/**
 * The vignette x model matrix and the side-by-side detail on a large run (target: no step holds
 * the event loop over 50 ms): a finished run of 2 models x 5 epochs x 10,000 vignettes is written
 * straight to a fresh database and scored with `match`; then pages of the matrix are asked for in
 * manifest order (first and last page) and sorted by flip rate (first page, and a page 5,000 rows
 * deep), and one vignette side by side. Reports each call's wall time and the longest event-loop
 * hold over all of them, as wall time (which counts the time the OS gave the CPU to others: on a
 * loaded machine it overstates) and as this process's CPU time between two turns of the loop.
 * Runs on: Node.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { openEngine } from '../core/service/engine.js';
import { initTelemetry } from '../core/telemetry.js';
import { writeStoredRun } from './stored-run.js';
import { peakRssMb, round } from './support.js';

const VIGNETTES = Number(process.env.BENCH_MATRIX_VIGNETTES ?? 10_000);
const RUN_ID = 'rmatrix';

async function main(): Promise<void> {
  initTelemetry({ defaultLevel: 'warn' });
  const dir = mkdtempSync(join(tmpdir(), 'panoptes-bench-matrix-'));
  try {
    const dataDir = join(dir, 'data');
    const records = writeStoredRun(dataDir, {
      runId: RUN_ID,
      vignettes: VIGNETTES,
      epochs: 5,
      models: [
        { model: 'mock-strong', accuracy: 0.8 },
        { model: 'mock-weak', accuracy: 0.6 },
      ],
    });
    const engine = openEngine({ dataDir });
    await engine.service.scoreRun({ runId: RUN_ID, scorers: { scorers: [{ name: 'exact', type: 'match' }] } });
    engine.scoring.start();
    await engine.scoring.finish(RUN_ID);

    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    // The CPU this process spent between two consecutive turns of the loop: a step's own cost.
    let maxStepCpuMs = 0;
    let lastCpu = process.cpuUsage();
    let ticking = true;
    const tick = () => {
      const cpu = process.cpuUsage(lastCpu);
      maxStepCpuMs = Math.max(maxStepCpuMs, (cpu.user + cpu.system) / 1000);
      lastCpu = process.cpuUsage();
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const calls: Record<string, number> = {};
    const timed = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      const out = await f();
      calls[name] = round(performance.now() - t0, 1);
      return out;
    };
    const s = engine.service;
    await timed('manifest_order_first_page_ms', () => s.scoreMatrix({ runId: RUN_ID, limit: 50 }));
    await timed('manifest_order_last_page_ms', () => s.scoreMatrix({ runId: RUN_ID, limit: 50, cursor: VIGNETTES - 50 }));
    await timed('manifest_order_1000_rows_ms', () => s.scoreMatrix({ runId: RUN_ID, limit: 1000 }));
    const byFlip = await timed('flip_rate_first_page_ms', () => s.scoreMatrix({ runId: RUN_ID, sort: 'flip_rate', limit: 50 }));
    await timed('flip_rate_page_at_5000_ms', () => s.scoreMatrix({ runId: RUN_ID, sort: 'flip_rate', limit: 50, cursor: 5000 }));
    await timed('detail_ms', () => s.scoreDetail({ runId: RUN_ID, vignetteId: byFlip.rows[0]!.vignetteId }));
    loop.disable();
    ticking = false;
    await engine.close();
    process.stdout.write(
      JSON.stringify({
        records,
        vignettes: VIGNETTES,
        ...calls,
        max_event_loop_hold_ms: round(loop.max / 1e6, 1),
        max_step_cpu_ms: round(maxStepCpuMs, 1),
        peak_rss_mb: round(peakRssMb(), 1),
        target: { max_event_loop_hold_ms: 50 },
      }) + '\n',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
