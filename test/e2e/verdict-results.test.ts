/**
 * The Results view shows what the report and the matrix say of a run's verdicts, in real Chromium
 * against a real engine: a two-judge scorer's Krippendorff alpha above its leaderboard, and a code
 * plugin declared graded whose every verdict is a boolean read as pass/fail in the vignette
 * matrix (each cell's flip rate, as the rule with the same verdicts has it).
 * Runs on: Node (tests), driving Chromium.
 */
import { expect, it } from 'vitest';
import { formatScore } from '../../core/common/score-format.js';
import { writeTargetManifest } from '../helpers/temp.js';
import { WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

const s = useUiSession();

it("shows the judges' alpha, and a boolean plugin's flip rates in the matrix", async () => {
  const scorers = {
    scorers: [
      { name: 'two', type: 'judge' as const, judges: ['mock-judge', 'mock-judge-2'], rubric: 'Is the answer the right option?' },
      { name: 'same', type: 'code' as const, code: `function score(i) { return i.response.trim() === String(i.target); }` },
    ],
  };
  const { ui, page, problems } = s;
  const run = await s.scoredRun({ manifestPath: writeTargetManifest(s.dir, 12), models: ['mock-strong', 'mock-weak'], epochs: 3, privacy: 'off', scorers });
  const two = await s.call('report', { runId: run.id, scorer: 'two' });
  expect(two.judges!.alpha).not.toBeNull();

  await page.goto(ui.appUrl);
  await page.goto(`${ui.origin}/#/results/${run.id}`);
  await expect.poll(() => page.getByTestId('judge-agreement').textContent(), WAIT).toContain(`agreement (Krippendorff's α): ${two.judges!.alpha!.toFixed(3)}`);

  const matrix = await s.call('scoreMatrix', { runId: run.id, scorer: 'same', limit: 50 });
  expect(matrix.kind).toBe('pass_fail');
  const flipping = matrix.rows.flatMap((r) => r.cells.filter((c) => c.flipRate! > 0).map((c) => ({ vignette: r.vignetteId, cell: c })));
  expect(flipping.length).toBeGreaterThan(0);
  await page.getByTestId('results-scorer').selectOption('same');
  const first = flipping[0]!;
  const button = page.locator(`[data-testid=matrix-table] tr[data-vignette="${first.vignette}"] button[data-model="${first.cell.model}"]`);
  await expect.poll(() => button.locator('.matrix-note').first().textContent(), WAIT).toBe(`flip ${formatScore(first.cell.flipRate)}`);
  expect(problems).toEqual([]);
}, 120_000);
