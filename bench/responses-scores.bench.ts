/**
 * The Responses view's query with score columns at scale: a finished run of 2 models x 5 epochs x
 * N vignettes (1,000,000 records by default; BENCH_RESPONSES_RECORDS sets another size), latencies
 * of 0-2,999 ms and 1-400 output tokens, is written straight to a fresh database and scored with
 * `match`; then pages of 200 records, each with its score cells, are asked for as the view asks
 * them: the first page, failures only, a metadata field, every sort both ways, and a rare text
 * search. Each query reads REPEATS successive pages (following `nextAfter`) and reports its page
 * latency (p50, p95) and the longest the event loop was held while it ran (`longest_step_ms`: the
 * largest lateness of a 1 ms timer), beside the same timer's lateness over an idle second before
 * the queries (`idle_longest_step_ms`, what the loaded machine alone costs); `longest_step_cpu_ms` is
 * the most CPU time the main thread spent between two turns (Linux), which the machine's load does
 * not inflate.
 * Runs on: Node.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResponsesInput } from '../core/service/contract.js';
import { openEngine } from '../core/service/engine.js';
import { initTelemetry } from '../core/telemetry.js';
import { writeStoredRun } from './stored-run.js';
import { peakRssMb, round } from './support.js';

const RECORDS = Number(process.env.BENCH_RESPONSES_RECORDS ?? 1_000_000);
const EPOCHS = 5;
const MODELS = [
  { model: 'mock-strong', accuracy: 0.8 },
  { model: 'mock-weak', accuracy: 0.6 },
];
const REPEATS = Number(process.env.BENCH_RESPONSES_REPEATS ?? 7);
const PAGE = 200;
const RUN_ID = 'rresponses';

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** This thread's time on a CPU so far, in ms (Linux: /proc/thread-self/schedstat, in ns), or null elsewhere. */
function threadCpuMs(): number | null {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
}

/**
 * Runs `work` while a 1 ms timer watches the loop: the largest lateness it saw (wall time, which on a
 * loaded machine counts the time the OS gave other processes), and the most CPU time the main thread
 * spent between two of its turns (what the loop was held by this process's own doing; the reader's
 * thread works on its own time, not counted).
 */
async function watched<T>(work: () => Promise<T>): Promise<{ value: T; longestStepMs: number; longestStepCpuMs: number | null }> {
  let last = performance.now();
  let lastCpu = threadCpuMs();
  let longest = 0;
  let longestCpu: number | null = lastCpu === null ? null : 0;
  const timer = setInterval(() => {
    const now = performance.now();
    const cpu = threadCpuMs();
    longest = Math.max(longest, now - last - 1);
    if (cpu !== null && lastCpu !== null && longestCpu !== null) longestCpu = Math.max(longestCpu, cpu - lastCpu);
    last = now;
    lastCpu = cpu;
  }, 1);
  try {
    const value = await work();
    // The timer's turn after the work: a hold at its very end is counted too.
    await new Promise((r) => setTimeout(r, 2));
    return { value, longestStepMs: longest, longestStepCpuMs: longestCpu };
  } finally {
    clearInterval(timer);
  }
}

async function main(): Promise<void> {
  initTelemetry({ defaultLevel: 'warn' });
  const dir = mkdtempSync(join(tmpdir(), 'panoptes-bench-responses-'));
  try {
    const dataDir = join(dir, 'data');
    const vignettes = Math.ceil(RECORDS / (MODELS.length * EPOCHS));
    const t0 = performance.now();
    const records = writeStoredRun(dataDir, {
      runId: RUN_ID,
      vignettes,
      epochs: EPOCHS,
      models: MODELS,
      callOf: (i, epoch) => ({ latencyMs: (i * 7919 + epoch * 104_729) % 3000, outputTokens: 1 + ((i * 31 + epoch) % 400) }),
    });
    const writeS = (performance.now() - t0) / 1000;
    const engine = openEngine({ dataDir });
    const t1 = performance.now();
    await engine.service.scoreRun({ runId: RUN_ID, scorers: { scorers: [{ name: 'exact', type: 'match' }] } });
    engine.scoring.start();
    await engine.scoring.finish(RUN_ID);
    const scoreS = (performance.now() - t1) / 1000;

    const s = engine.service;
    const idle = await watched(() => new Promise((r) => setTimeout(r, 1000)));
    const queries: Record<string, Omit<ResponsesInput, 'runId' | 'limit' | 'cursor' | 'after'>> = {
      first_page: {},
      newest_first: { order: 'desc' },
      failures_only: { verdict: 'fail', scorer: 'exact' },
      metadata_field: { metaKey: 'topic', metaValue: 't3' },
      sort_by_score_desc: { sort: 'score', scorer: 'exact', order: 'desc' },
      sort_by_score_asc: { sort: 'score', scorer: 'exact' },
      sort_by_latency: { sort: 'latency' },
      sort_by_latency_desc: { sort: 'latency', order: 'desc' },
      sort_by_tokens_desc: { sort: 'tokens', order: 'desc' },
      sort_by_vignette: { sort: 'vignette' },
      sort_by_model: { sort: 'model' },
      failures_sorted_by_vignette: { verdict: 'fail', scorer: 'exact', sort: 'vignette' },
      failures_sorted_by_latency: { verdict: 'fail', scorer: 'exact', sort: 'latency' },
      text_search: { text: 'v4242' },
    };
    const figures: Record<string, { p50_ms: number; p95_ms: number; longest_step_ms: number; longest_step_cpu_ms: number | null; pages: number; rows: number }> = {};
    for (const [name, q] of Object.entries(queries)) {
      const times: number[] = [];
      let after: number | undefined;
      let rows = 0;
      const { longestStepMs, longestStepCpuMs } = await watched(async () => {
        for (let i = 0; i < REPEATS; i++) {
          const start = performance.now();
          const page = await s.responses({ runId: RUN_ID, ...q, limit: PAGE, ...(after === undefined ? {} : { after }) });
          times.push(performance.now() - start);
          rows = page.items.length;
          // Walk on to the next page where there is one; a short result is asked for again.
          after = page.nextAfter ?? undefined;
        }
      });
      times.sort((a, b) => a - b);
      figures[name] = {
        p50_ms: round(percentile(times, 50), 1),
        p95_ms: round(percentile(times, 95), 1),
        longest_step_ms: round(longestStepMs, 1),
        longest_step_cpu_ms: longestStepCpuMs === null ? null : round(longestStepCpuMs, 1),
        pages: REPEATS,
        rows,
      };
    }
    await engine.close();
    process.stdout.write(
      JSON.stringify({
        records,
        vignettes,
        scorers: 1,
        page_rows: PAGE,
        write_s: round(writeS, 1),
        score_s: round(scoreS, 1),
        idle_longest_step_ms: round(idle.longestStepMs, 1),
        idle_longest_step_cpu_ms: idle.longestStepCpuMs === null ? null : round(idle.longestStepCpuMs, 1),
        ...figures,
        peak_rss_mb: round(peakRssMb(), 1),
      }) + '\n',
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
