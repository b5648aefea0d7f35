/**
 * The renderer under load, in real Chromium (Debian's /usr/bin/chromium via playwright-core),
 * against the browser bridge in this process:
 *   1. Live grid: a run of 10,000 jobs (100 models x 100 epochs) open in the Run view while events
 *      arrive at 100 a second, each carrying 100 changed jobs (10,000 job updates a second) until
 *      every job is done. Reports the longest main-thread task (PerformanceObserver 'longtask';
 *      target: none over 50 ms), and frames dropped while the grid updates (from requestAnimationFrame
 *      intervals: an interval of n frame budgets dropped n - 1 frames).
 *   2. Responses: a run of 1,000,000 records (1,000 vignettes x 10 models x 100 epochs, written
 *      straight through the Store, one transaction per job). Reports the time from opening the
 *      Responses view to its first page of rows in the DOM and painted (target: under 200 ms),
 *      then the same with a model filter, an epoch filter, and the next page on scrolling.
 *   3. Responses with score columns: the same million records scored by a pass/fail rule (`even`:
 *      half the vignettes pass) and a graded code plugin (`tenths`: 0.0-0.9, the vignette's last digit),
 *      through the durable score queue as `panoptes score` does. Reports the first page with its
 *      score cells painted, *Failures only*, and sorting by the graded column both ways, each until
 *      the first row shows what was asked for.
 * The events are synthetic (the engine's own hub coalesces to ~10 a second per run); the jobs,
 * runs and records are real rows of a real database.
 * Runs on: Node, driving Chromium.
 */
import { existsSync } from 'node:fs';
import { chromium, type Page } from 'playwright-core';
import type { IndexedVignette, Job, ResponseRecord } from '../core/domain.js';
import { createHttpServer } from '../core/http/api.js';
import { browserBridge, bridgeSources } from '../core/http/bridge.js';
import { ManifestRoots } from '../core/http/manifest-roots.js';
import type { ControlEvent, RunSummary } from '../core/service/contract.js';
import { DEFAULT_RUN_OPTIONS } from '../core/service/control-service.js';
import type { Store } from '../core/store/store.js';
import { benchEngine, round } from './support.js';

const CHROMIUM = process.env.PANOPTES_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const TOKEN = 'bench-token-0123456789abcdefghij';

const GRID = { models: 100, epochs: 100, vignettes: 40, eventsPerSecond: 100, jobsPerEvent: 100, step: 4 };
const BIG = { vignettes: Number(process.env.BENCH_RENDERER_VIGNETTES ?? 1000), models: 10, epochs: 100 };
const REPEATS = 5;

/** A run written through the Store: vignettes staged, run inserted and claimed, jobs planned. */
function seedRun(store: Store, runId: string, models: string[], epochs: number, vignetteCount: number) {
  const vignettes: IndexedVignette[] = Array.from({ length: vignetteCount }, (_, i) => ({
    index: i,
    id: `v${i}`,
    prompt: `Vignette ${i}: a patient presents with symptom ${i % 97}. What should happen next?`,
  }));
  store.runs.beginStaging(runId);
  store.runs.stageVignettes(runId, vignettes);
  store.runs.insertRun({ id: runId, manifestPath: `/bench/${runId}.jsonl`, models, epochs, vignetteCount, options: DEFAULT_RUN_OPTIONS });
  store.runs.claimRun(runId, 'bench', 3_600_000);
  const jobs = store.jobs.insertJobs(runId, models.flatMap((model) => Array.from({ length: epochs }, (_, e) => ({ model, epoch: e + 1 }))));
  return { vignettes, jobs };
}

/** The million-record run: every job's records in one transaction, then the run settled as done. */
function buildMillion(store: Store, runId: string): number {
  const models = Array.from({ length: BIG.models }, (_, i) => `model-${i}`);
  const { vignettes, jobs } = seedRun(store, runId, models, BIG.epochs, BIG.vignettes);
  let records = 0;
  for (const job of jobs) {
    const attempt = store.jobs.startAttempt(job.id, 'bench')!;
    const batch: ResponseRecord[] = vignettes.map((v) => ({
      runId,
      jobId: job.id,
      vignetteId: v.id,
      vignetteIndex: v.index,
      model: job.model,
      epoch: job.epoch,
      prompt: v.prompt,
      response: `[${job.model}] epoch ${job.epoch}: the evidence for vignette ${v.index} suggests it depends on context.`,
      usage: { inputTokens: 20 + (v.index % 13), outputTokens: 30 + (v.index % 90) },
      latencyMs: 5 + (v.index % 40),
      host: `bench/${job.model}`,
      cached: false,
      sampling: {},
      finishedAt: Date.now(),
    }));
    const usage = batch.reduce((u, r) => ({ inputTokens: u.inputTokens + r.usage.inputTokens, outputTokens: u.outputTokens + r.usage.outputTokens }), { inputTokens: 0, outputTokens: 0 });
    records += store.records.settle({ jobId: job.id, attempt, workerId: 'bench', vignettesDone: vignettes.length, usage }, batch).records.length;
  }
  store.runs.settleRun(runId);
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  return records;
}

/**
 * Events at a fixed rate for the 10,000-job run: each advances the next `jobsPerEvent` jobs by
 * `step` vignettes (running, then done), with the run's summary to match, until every job is done.
 */
class SyntheticFeed {
  private readonly listeners = new Set<(event: ControlEvent) => void>();
  private readonly jobs: Job[];
  private cursor = 0;
  private calls = 0;
  private done = 0;
  sent = 0;

  constructor(
    private readonly run: RunSummary,
    jobs: Job[],
  ) {
    this.jobs = jobs.map((j) => ({ ...j, vignetteCount: GRID.vignettes }));
  }

  subscribe = (listener: (event: ControlEvent) => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Emits until every job is done; resolves with the achieved rate. */
  async play(): Promise<{ events: number; seconds: number; events_per_sec: number }> {
    const interval = 1000 / GRID.eventsPerSecond;
    const start = performance.now();
    while (this.done < this.jobs.length) {
      this.emit();
      const next = start + this.sent * interval;
      await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
    }
    const seconds = (performance.now() - start) / 1000;
    return { events: this.sent, seconds: round(seconds, 2), events_per_sec: round(this.sent / seconds, 1) };
  }

  private emit(): void {
    const changed: Job[] = [];
    for (let n = 0; n < GRID.jobsPerEvent && this.done < this.jobs.length; n++) {
      const job = this.jobs[this.cursor]!;
      this.cursor = (this.cursor + 1) % this.jobs.length;
      if (job.status === 'done') {
        n -= 1;
        continue;
      }
      const before = job.vignettesDone;
      job.vignettesDone = Math.min(GRID.vignettes, before + GRID.step);
      job.attempt = Math.max(job.attempt, 1);
      job.workerId = 'local';
      job.startedAt ??= Date.now();
      job.usage = { inputTokens: job.vignettesDone * 30, outputTokens: job.vignettesDone * 60 };
      job.status = job.vignettesDone === GRID.vignettes ? 'done' : 'running';
      if (job.status === 'done') {
        job.finishedAt = Date.now();
        this.done += 1;
      }
      this.calls += job.vignettesDone - before;
      changed.push({ ...job });
    }
    const run: RunSummary = {
      ...this.run,
      status: this.done === this.jobs.length ? 'done' : 'running',
      doneCount: this.done,
      calls: this.calls,
      inputTokens: this.calls * 30,
      outputTokens: this.calls * 60,
      finishedAt: this.done === this.jobs.length ? Date.now() : null,
    };
    const event: ControlEvent = { type: 'run', run, jobs: changed, usage: [] };
    this.sent += 1;
    for (const listener of this.listeners) listener(event);
  }
}

/** Installed before the app loads: long tasks and animation-frame intervals, kept on `window.__bench`. */
const PAGE_PROBE = `
  window.__bench = { longTasks: [], frames: [], recording: false };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (window.__bench.recording) window.__bench.longTasks.push(e.duration);
  }).observe({ type: 'longtask', buffered: true });
  let last = 0;
  const tick = (t) => {
    if (window.__bench.recording && last) window.__bench.frames.push(t - last);
    last = t;
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
`;

/** Opens a view by its URL fragment and measures until its first record row is in the DOM and painted. */
async function timeToRows(page: Page, hash: string): Promise<number> {
  await page.evaluate(`location.hash = '#/workers'`);
  await page.waitForSelector('[data-testid=workers-table]');
  return page.evaluate<number>(`(async () => {
    const t0 = performance.now();
    location.hash = ${JSON.stringify(hash)};
    await new Promise((resolve) => {
      const seen = () => document.querySelector('[data-testid=record-row]');
      if (seen()) return resolve();
      const observer = new MutationObserver(() => { if (seen()) { observer.disconnect(); resolve(); } });
      observer.observe(document.body, { childList: true, subtree: true });
    });
    await new Promise((resolve) => requestAnimationFrame(() => resolve()));
    return performance.now() - t0;
  })()`);
}

/** Changes a filter and measures until the first row shows what it asks for. */
async function timeToFilter(page: Page, select: string, value: string, column: number): Promise<number> {
  const t0 = Date.now();
  await page.selectOption(select, value);
  // Locators, not waitForFunction: the page's CSP forbids the eval that string predicates need.
  await page.locator(`[data-testid=record-row]:first-child > span:nth-child(${column})`, { hasText: new RegExp(`^${value}$`) }).waitFor();
  return Date.now() - t0;
}

/** The scorers of part 3: a rule half the records fail, and a graded plugin with ten values, each on a tenth of them. */
const SCORERS = {
  scorers: [
    { name: 'even', type: 'regex' as const, pattern: 'vignette [0-9]*[02468] suggests' },
    { name: 'tenths', type: 'code' as const, code: 'function score(input) { return (Number(/vignette (\\d+)/.exec(input.response)[1]) % 10) / 10; }' },
  ],
};

/** Does something in the page and measures until `done` (a locator's text) shows in the first row. */
async function timeToFirstRow(page: Page, act: () => Promise<void>, cell: string, text: RegExp): Promise<number> {
  const t0 = Date.now();
  await act();
  await page.locator(`[data-testid=record-row]:first-child ${cell}`, { hasText: text }).first().waitFor();
  return Date.now() - t0;
}

/** Part 3: Responses of the scored million, with its two score columns. */
async function scoredResponses(page: Page) {
  /** The first page as part 2 times it, and on until its first row's score cells are there. */
  const open = async (): Promise<number> => {
    const rows = await timeToRows(page, '#/responses/rmillion');
    const t0 = Date.now();
    await page.locator('[data-testid=record-row]:first-child [data-testid=score-cell]').first().waitFor();
    return rows + (Date.now() - t0);
  };
  const firstPage: number[] = [];
  for (let i = 0; i < REPEATS; i++) firstPage.push(await open());
  const failures: number[] = [];
  const sortAsc: number[] = [];
  const sortDesc: number[] = [];
  const tenths = page.locator('.sort-header', { hasText: /^tenths/ });
  for (let i = 0; i < REPEATS; i++) {
    await open();
    failures.push(await timeToFirstRow(page, () => page.locator('[data-testid=filter-failures]').check(), '[data-passed=false]', /✗/));
    await page.locator('[data-testid=filter-failures]').uncheck();
    await page.locator('[data-testid=record-row]:first-child [data-passed=true]').first().waitFor();
    // The graded column's cells are the row's numeric score cells.
    sortAsc.push(await timeToFirstRow(page, () => tenths.click(), '.score-cell.num', /^0\.000$/));
    sortDesc.push(await timeToFirstRow(page, () => tenths.click(), '.score-cell.num', /^0\.900$/));
  }
  return { first_page: stats(firstPage), failures_only: stats(failures), sort_by_score_asc: stats(sortAsc), sort_by_score_desc: stats(sortDesc) };
}

function stats(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median_ms: round(sorted[Math.floor(sorted.length / 2)]!, 1), max_ms: round(sorted[sorted.length - 1]!, 1), samples: sorted.map((s) => round(s, 1)) };
}

async function main(): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium`);
  const env = benchEngine({}, 8);
  const { engine } = env;
  try {
    const t0 = performance.now();
    const records = buildMillion(engine.store, 'rmillion');
    const seedSeconds = (performance.now() - t0) / 1000;
    const gridModels = Array.from({ length: GRID.models }, (_, i) => `grid-model-${String(i).padStart(2, '0')}`);
    const grid = seedRun(engine.store, 'rgrid', gridModels, GRID.epochs, GRID.vignettes);
    const gridRun = (await engine.service.getRun({ runId: 'rgrid' })).run;
    const feed = new SyntheticFeed(gridRun, grid.jobs);

    // The real service, but with the synthetic feed as its event stream.
    const app = createHttpServer(engine, { token: TOKEN });
    await app.register(browserBridge, {
      ...bridgeSources(engine),
      subscribe: feed.subscribe,
      token: TOKEN,
     
      manifestRoots: ManifestRoots.of(engine.dataDir),
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    const origin = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.addInitScript(PAGE_PROBE);
      await page.goto(`${origin}/#token=${TOKEN}`);
      await page.waitForSelector('[data-testid=connection]:has-text("live")');

      // 1. The live grid.
      await page.evaluate(`location.hash = '#/runs/rgrid'`);
      await page.waitForSelector('[data-testid=job-grid] canvas');
      await page.waitForTimeout(500);
      await page.evaluate(`window.__bench.recording = true`);
      const played = await feed.play();
      await page.locator('[data-testid=job-legend] [data-status=done] strong', { hasText: /^10,000$/ }).waitFor({ timeout: 30_000 });
      await page.waitForTimeout(300);
      const probe = await page.evaluate<{ longTasks: number[]; frames: number[] }>(`(() => { window.__bench.recording = false; return window.__bench; })()`);
      const sortedFrames = [...probe.frames].sort((a, b) => a - b);
      const budget = sortedFrames[Math.floor(sortedFrames.length / 2)] ?? 16.7;
      const dropped = probe.frames.reduce((n, f) => n + Math.max(0, Math.round(f / budget) - 1), 0);

      // 2. The responses table over a million records.
      const firstPage: number[] = [];
      for (let i = 0; i < REPEATS; i++) firstPage.push(await timeToRows(page, '#/responses/rmillion'));
      const byModel: number[] = [];
      const byEpoch: number[] = [];
      for (let i = 0; i < REPEATS; i++) {
        await timeToRows(page, '#/responses/rmillion');
        byModel.push(await timeToFilter(page, '[data-testid=filter-model]', `model-${BIG.models - 1 - i}`, 2));
        byEpoch.push(await timeToFilter(page, '[data-testid=filter-epoch]', String(BIG.epochs - i), 3));
      }
      await timeToRows(page, '#/responses/rmillion');
      const t1 = Date.now();
      await page.locator('[data-testid=records-scroll]').hover();
      await page.mouse.wheel(0, 200 * 36);
      await page.locator('[data-testid=records-status]', { hasText: /^400 loaded/ }).waitFor();
      const nextPageMs = Date.now() - t1;

      // 3. The same table once scored, with its score columns.
      const t2 = performance.now();
      await engine.service.scoreRun({ runId: 'rmillion', scorers: SCORERS });
      engine.scoring.start();
      await engine.scoring.finish('rmillion');
      const scoreSeconds = (performance.now() - t2) / 1000;
      await page.evaluate(`window.__bench.longTasks = []; window.__bench.recording = true`);
      const scored = await scoredResponses(page);
      const scoredTasks = await page.evaluate<number[]>(`(() => { window.__bench.recording = false; return window.__bench.longTasks; })()`);

      const result = {
        grid: {
          jobs: grid.jobs.length,
          feed: { ...played, jobs_per_event: GRID.jobsPerEvent, job_updates_per_sec: round(played.events_per_sec * GRID.jobsPerEvent, 0) },
          longest_task_ms: round(Math.max(0, ...probe.longTasks), 1),
          long_tasks: probe.longTasks.length,
          long_tasks_over_50ms: probe.longTasks.filter((d) => d > 50).length,
          frames: probe.frames.length,
          frame_budget_ms: round(budget, 1),
          frames_dropped: dropped,
          longest_frame_ms: round(sortedFrames[sortedFrames.length - 1] ?? 0, 1),
          target_no_task_over_50ms: probe.longTasks.every((d) => d <= 50),
        },
        responses: {
          records,
          seed_seconds: round(seedSeconds, 1),
          first_page: stats(firstPage),
          filter_model: stats(byModel),
          filter_epoch: stats(byEpoch),
          next_page_ms: nextPageMs,
          target_first_page_under_200ms: Math.max(...firstPage) < 200,
        },
        responses_with_scores: {
          scorers: SCORERS.scorers.map((d) => d.name),
          score_seconds: round(scoreSeconds, 1),
          ...scored,
          longest_task_ms: round(Math.max(0, ...scoredTasks), 1),
          long_tasks_over_50ms: scoredTasks.filter((d) => d > 50).length,
        },
      };
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } finally {
      await browser.close();
      await app.close();
    }
  } finally {
    await env.cleanup();
  }
}

await main();
