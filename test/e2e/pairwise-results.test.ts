/**
 * A pairwise judge's Results view, in real Chromium against a real engine: a run of mock-strong
 * and mock-weak judged pairwise against mock-weak shows, above its leaderboard, that its means are
 * win rates against that baseline, and mock-strong's mean as the report gives it; a `match` scorer
 * of the same run shows no such note.
 * Runs on: Node (tests), driving Chromium.
 */
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { formatScore } from '../../renderer/src/components/score-format.js';
import { tempDir, writeTargetManifest } from '../helpers/temp.js';
import { bridgeCall, launchChromium, startInProcessUi, TOKEN, watchPage, type InProcessUi } from './harness.js';

const WAIT = { timeout: 30_000, interval: 50 };

let tmp: ReturnType<typeof tempDir>;
let ui: InProcessUi;
let browser: Browser;
let page: Page;
let problems: string[];

beforeAll(async () => {
  tmp = tempDir();
  ui = await startInProcessUi(join(tmp.dir, 'data'));
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  problems = watchPage(page);
});

afterAll(async () => {
  await browser?.close();
  await ui?.close();
  tmp?.cleanup();
});

it("says above a pairwise judge's leaderboard that its means are win rates against the baseline", async () => {
  const scorers = {
    scorers: [
      { name: 'vs-weak', type: 'judge' as const, mode: 'pairwise' as const, baseline: 'mock-weak', judges: ['mock-judge'], rubric: 'Which answer is right?' },
      { name: 'exact', type: 'match' as const },
    ],
  };
  const run = await bridgeCall(ui.origin, TOKEN, 'createRun', { manifestPath: writeTargetManifest(tmp.dir, 20), models: ['mock-strong', 'mock-weak'], epochs: 1, scorers });
  ui.engine.scoring.start();
  await ui.engine.scheduler.runToCompletion(run.id);
  await ui.engine.scoring.finish(run.id);
  const report = await bridgeCall(ui.origin, TOKEN, 'report', { runId: run.id, scorer: 'vs-weak' });

  await page.goto(ui.appUrl);
  await page.goto(`${ui.origin}/#/results/${run.id}`);
  await expect.poll(() => page.getByTestId('pairwise-baseline').textContent(), WAIT).toMatch(/^Pairwise against the baseline mock-weak: .*win rate against the baseline/);
  const strong = report.models.find((m) => m.model === 'mock-strong')!;
  await expect.poll(() => page.locator('[data-testid=leaderboard-table] tr[data-model="mock-strong"] [data-col=mean]').textContent(), WAIT).toBe(formatScore(strong.mean));
  // Another scorer's leaderboard, once it shows that scorer's report, has no such note.
  const exact = await bridgeCall(ui.origin, TOKEN, 'report', { runId: run.id, scorer: 'exact' });
  await page.getByTestId('results-scorer').selectOption('exact');
  await expect.poll(() => page.locator('[data-testid=leaderboard] .card-header').textContent(), WAIT).toMatch(/^Leaderboardexact /);
  const exactStrong = exact.models.find((m) => m.model === 'mock-strong')!;
  await expect.poll(() => page.locator('[data-testid=leaderboard-table] tr[data-model="mock-strong"] [data-col=mean]').textContent(), WAIT).toBe(formatScore(exactStrong.mean));
  expect(await page.getByTestId('pairwise-baseline').count()).toBe(0);
  expect(problems).toEqual([]);
}, 120_000);
