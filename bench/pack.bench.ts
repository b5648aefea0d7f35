/**
 * `panoptes pack` on this repository, in-process: wall time of reading the folder and of fitting
 * the pack to gpt-5-mini and llama-3.3-70b's smallest window, and the longest the event loop was
 * held during each (a 1 ms timer's largest lateness, and monitorEventLoopDelay's max), so a step
 * that holds the loop over 50 ms shows which phase it is in. Beside it, a process doing nothing but
 * the same 1 ms timer measures what the machine's load alone makes of the loop (on a busy machine a
 * process waits for a core, whatever it runs): a pack gap near that control's is the machine's, not
 * a step of the pack. Since both gaps move with the machine's load, each of the fit's steps on the
 * main thread is also timed alone, the least of five repeats (what the step itself costs, without
 * the waits for a core): every batch's ranking, delimiting and hand-off to the tokenizer thread, and
 * the fit of the whole and its prompt's assembly. BENCH_PACK_SOURCE packs another folder.
 * Runs on: Node.
 */
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import type { RepoFiles } from '../core/ingest/repo-files.js';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../core/models/catalog.js';
import { fitFiles } from '../core/ingest/fit.js';
import { batchEnd, packRepository, startBatch, type PackFile } from '../core/ingest/pack.js';
import { packPrompt } from '../core/ingest/pack-prompt.js';
import { estimateTextTokens } from '../core/models/router/token-estimate.js';
import { readSource, smallestWindow } from '../core/ingest/pack-source.js';
import { DEFAULT_MAX_BYTES } from '../core/ingest/repo-files.js';
import { packageRoot } from '../core/paths.js';
import { loadCatalog } from '../core/service/load-catalog.js';
import { round } from './support.js';

const source = process.env.BENCH_PACK_SOURCE ?? packageRoot();
const models = ['gpt-5-mini', 'llama-3.3-70b'];

/** Runs `step` while watching the loop: its wall time and the longest stall seen. */
async function watched<T>(step: () => Promise<T>): Promise<{ value: T; ms: number; maxGapMs: number; histogramMaxMs: number }> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  let last = performance.now();
  let maxGap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last - 1);
    last = now;
  }, 1);
  h.enable();
  const start = performance.now();
  try {
    const value = await step();
    return { value, ms: performance.now() - start, maxGapMs: maxGap, histogramMaxMs: h.max / 1e6 };
  } finally {
    clearInterval(timer);
    h.disable();
  }
}

/** The idle control: the same timer in a process of its own, until told to stop (a line on stdin). */
const CONTROL = `let last = performance.now(), max = 0;
setInterval(() => { const n = performance.now(); max = Math.max(max, n - last - 1); last = n; }, 1);
process.stdin.once('data', () => { process.stdout.write(String(max)); process.exit(0); });`;
const control = spawn(process.execPath, ['-e', CONTROL], { stdio: ['pipe', 'pipe', 'inherit'] });
let controlOut = '';
control.stdout.on('data', (d: Buffer) => (controlOut += d.toString()));
const controlDone = new Promise((r) => control.on('exit', r));
await new Promise((r) => setTimeout(r, 300));

const REPEATS = 5;

/** The least of REPEATS timings of `step`'s synchronous part (what it holds the loop for), awaiting what it started between repeats. */
async function leastSyncMs(step: () => Promise<unknown>): Promise<number> {
  let least = Infinity;
  for (let r = 0; r < REPEATS; r++) {
    const start = performance.now();
    const started = step();
    least = Math.min(least, performance.now() - start);
    await started;
  }
  return least;
}

/** Each of the fit's main-thread steps timed alone: the longest batch, and the fit with its prompt. */
async function stepCosts(repo: RepoFiles, budget: number) {
  let longestBatch = { ms: 0, files: 0, chars: 0 };
  const sized: PackFile[] = [];
  for (let i = 0; i < repo.files.length; ) {
    const end = batchEnd(repo.files, i);
    const files = repo.files.slice(i, end);
    i = end;
    const ms = await leastSyncMs(() => startBatch(files).counts);
    if (ms > longestBatch.ms) longestBatch = { ms, files: files.length, chars: files.reduce((n, f) => n + f.text.length, 0) };
    const { batch, counts } = startBatch(files);
    const tokens = await counts;
    batch.forEach((f, j) => sized.push({ ...f, tokens: tokens[j]! }));
  }
  const parts = { instruction: undefined, name: repo.name, kept: 0, total: sized.length, keptChars: 0, totalChars: 0, diff: undefined };
  const fitMs = await leastSyncMs(() => {
    const { kept } = fitFiles(sized, 0, budget);
    return estimateTextTokens([packPrompt(parts, kept.map((f) => f.block))]);
  });
  return { longestBatchMs: round(longestBatch.ms), longestBatchFiles: longestBatch.files, longestBatchChars: longestBatch.chars, fitAndPromptMs: round(fitMs) };
}

const catalog = loadCatalog(process.env.PANOPTES_DATA_DIR ?? '/nonexistent-data-dir', []);
const window = smallestWindow(catalog, models);
const answerTokens = Math.min(DEFAULT_MAX_OUTPUT_TOKENS, Math.floor(window / 4));
const read = await watched(() => readSource(source, { maxBytes: DEFAULT_MAX_BYTES }));
const fit = await watched(() => packRepository(read.value, { models, window, answerTokens }));
const steps = await stepCosts(read.value, window - answerTokens);
control.stdin.write('stop\n');
await controlDone;
process.stdout.write(
  JSON.stringify({
    source,
    window,
    vignettes: fit.value.length,
    files: read.value.files.length,
    read: { ms: round(read.ms), maxLoopGapMs: round(read.maxGapMs), loopDelayMaxMs: round(read.histogramMaxMs) },
    fit: { ms: round(fit.ms), maxLoopGapMs: round(fit.maxGapMs), loopDelayMaxMs: round(fit.histogramMaxMs) },
    steps,
    idleControlMaxLoopGapMs: round(Number(controlOut)),
    loadavg: loadavg().map((l) => round(l)),
  }) + '\n',
);
