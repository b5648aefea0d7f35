/**
 * `report` over 1,000,000 scores (target: under 2 s): 2 models (`mock-strong` at 0.8 and
 * `mock-weak` at 0.6, their hits decided by the known-accuracy hash) x 5 epochs x 100,000
 * vignettes of a pass/fail scorer, streamed to buildScoreReport in pages of 1,000 cells as a store
 * query reads them, record by record (vignette-major), then again sliced and clustered by a
 * metadata key with 20 values. The pass/fail outcomes are decided before the clock starts; making
 * each page's cell objects is inside the measurement, as it is for a real store read.
 * Reports wall and CPU time per scenario, the longest the event loop was held (target < 50 ms) in
 * wall time (perf_hooks' monitorEventLoopDelay) and in this process's CPU time between two turns,
 * and peak RSS (target: well under 300 MB).
 * Runs on: Node.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { answersTarget } from '../core/models/providers/known-accuracy.js';
import { buildScoreReport, type ReportOptions, type ScoreCell } from '../core/scoring/report.js';
import { peakRssMb, round } from './support.js';

const VIGNETTES = 100_000;
const EPOCHS = 5;
const MODELS = [
  { model: 'mock-strong', accuracy: 0.8 },
  { model: 'mock-weak', accuracy: 0.6 },
];
const PAGE = 1_000;

const ids = Array.from({ length: VIGNETTES }, (_, i) => `v${i}`);
const groups = Array.from({ length: 20 }, (_, g) => `topic-${g}`);
/** hits[(v * EPOCHS + e) * MODELS.length + m] */
const hits = new Uint8Array(VIGNETTES * EPOCHS * MODELS.length);
for (let v = 0; v < VIGNETTES; v++) {
  for (let e = 0; e < EPOCHS; e++) {
    MODELS.forEach((m, mi) => {
      hits[(v * EPOCHS + e) * MODELS.length + mi] = answersTarget(m.model, ids[v]!, e + 1, m.accuracy) ? 1 : 0;
    });
  }
}

async function* pages(withGroup: boolean): AsyncGenerator<ScoreCell[]> {
  let page: ScoreCell[] = [];
  for (let v = 0; v < VIGNETTES; v++) {
    for (let e = 0; e < EPOCHS; e++) {
      for (let mi = 0; mi < MODELS.length; mi++) {
        const hit = hits[(v * EPOCHS + e) * MODELS.length + mi] === 1;
        const cell: ScoreCell = { model: MODELS[mi]!.model, vignetteId: ids[v]!, epoch: e + 1, value: hit ? 1 : 0, passed: hit };
        if (withGroup) cell.group = groups[v % groups.length]!;
        page.push(cell);
        if (page.length === PAGE) {
          yield page;
          page = [];
        }
      }
    }
  }
  if (page.length > 0) yield page;
}

/**
 * The most CPU time this process spent between two turns of the event loop, while `work` runs: how
 * long the report held the loop by its own doing. On a loaded machine the wall-clock gap between
 * turns also counts the time the OS gave other processes; CPU time does not (it does count V8's
 * helper threads, so it errs high).
 */
async function cpuBetweenTurns<T>(work: Promise<T>): Promise<{ result: T; maxMs: number }> {
  let done = false;
  let maxUs = 0;
  const ticker = (async () => {
    let last = process.cpuUsage();
    while (!done) {
      await nextTurn();
      const now = process.cpuUsage();
      maxUs = Math.max(maxUs, now.user + now.system - last.user - last.system);
      last = now;
    }
  })();
  const result = await work;
  done = true;
  await ticker;
  return { result, maxMs: maxUs / 1000 };
}

async function scenario(by: string | null) {
  const options: ReportOptions = { runId: 'bench', scorer: 'exact', scorerVersion: 'bench', kind: 'pass_fail', epochs: EPOCHS, by };
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const { result: report, maxMs: blockCpuMs } = await cpuBetweenTurns(buildScoreReport(options, pages(by !== null)));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  delay.disable();
  const strong = report.models[0]!;
  return {
    scores: VIGNETTES * EPOCHS * MODELS.length,
    wall_ms: round(ms, 0),
    // CPU time of this process over the same span: on a shared, loaded machine wall time also
    // counts the time other processes held the cores.
    cpu_ms: round((cpu.user + cpu.system) / 1000, 0),
    scores_per_sec: Math.round((VIGNETTES * EPOCHS * MODELS.length) / (ms / 1000)),
    max_loop_block_ms: round(delay.max / 1e6, 1),
    max_loop_block_cpu_ms: round(blockCpuMs, 1),
    // The figures themselves, so a run shows the report is the real one.
    strong_mean: round(strong.mean, 4),
    diff: round(report.pairs[0]!.diff, 4),
    diff_ci95: report.pairs[0]!.ci95?.map((x) => round(x, 4)),
    slices: report.slices?.length ?? 0,
  };
}

const plain = await scenario(null);
const sliced = await scenario('topic');
process.stdout.write(
  JSON.stringify({
    target_ms: 2000,
    plain,
    by_key: sliced,
    peak_rss_mb: round(peakRssMb(), 0),
    pass: plain.wall_ms < 2000 && plain.max_loop_block_cpu_ms < 50,
  }) + '\n',
);
