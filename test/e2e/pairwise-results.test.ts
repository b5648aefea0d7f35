/**
 * A pairwise judge's Results view, in real Chromium against a real engine: a run of mock-strong
 * and mock-weak judged pairwise against mock-weak shows, above its leaderboard, that its means are
 * win rates against that baseline, and mock-strong's mean as the report gives it; a `match` scorer
 * of the same run shows no such note.
 * Runs on: Node (tests), driving Chromium.
 */
import { expect, it } from 'vitest';
import { formatScore } from '../../core/common/score-format.js';
import { writeTargetManifest } from '../helpers/temp.js';
import { WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

const s = useUiSession();

it("says above a pairwise judge's leaderboard that its means are win rates against the baseline", async () => {
  const scorers = {
    scorers: [
      { name: 'vs-weak', type: 'judge' as const, mode: 'pairwise' as const, baseline: 'mock-weak', judges: ['mock-judge'], rubric: 'Which answer is right?' },
      { name: 'exact', type: 'match' as const },
    ],
  };
  const { ui, page, problems } = s;
  const run = await s.scoredRun({ manifestPath: writeTargetManifest(s.dir, 20), models: ['mock-strong', 'mock-weak'], epochs: 1, scorers });
  const report = await s.call('report', { runId: run.id, scorer: 'vs-weak' });

  await page.goto(ui.appUrl);
  await page.goto(`${ui.origin}/#/results/${run.id}`);
  await expect.poll(() => page.getByTestId('pairwise-baseline').textContent(), WAIT).toMatch(/^Pairwise against the baseline mock-weak: .*win rate against the baseline/);
  const strong = report.models.find((m) => m.model === 'mock-strong')!;
  await expect.poll(() => page.locator('[data-testid=leaderboard-table] tr[data-model="mock-strong"] [data-col=mean]').textContent(), WAIT).toBe(formatScore(strong.mean));
  // Another scorer's leaderboard, once it shows that scorer's report, has no such note.
  const exact = await s.call('report', { runId: run.id, scorer: 'exact' });
  await page.getByTestId('results-scorer').selectOption('exact');
  await expect.poll(() => page.locator('[data-testid=leaderboard] .card-header').textContent(), WAIT).toMatch(/^Leaderboardexact /);
  const exactStrong = exact.models.find((m) => m.model === 'mock-strong')!;
  await expect.poll(() => page.locator('[data-testid=leaderboard-table] tr[data-model="mock-strong"] [data-col=mean]').textContent(), WAIT).toBe(formatScore(exactStrong.mean));
  expect(await page.getByTestId('pairwise-baseline').count()).toBe(0);
  expect(problems).toEqual([]);
}, 120_000);
