/**
 * A run posed until decided, from the New run form to the Run view, in real Chromium against the
 * real `panoptes serve --ui`: the Plan panel plans the example's models from guessed accuracies and
 * marks the cheapest design; the "until decided" section sends its settings with the run; the Run
 * view shows which models are still posed and each pair's decision with its anytime-valid interval,
 * as the contract's `decide` says. No console error, exception or failed request is allowed.
 * Runs on: Node (tests), driving Chromium.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { formatUsd } from '../../core/common/money.js';
import { formatInt } from '../../core/common/numbers.js';
import { shotPath, WAIT } from './harness.js';
import { useServedUiSession } from './ui-session.js';

const s = useServedUiSession({ context: { viewport: { width: 1400, height: 1000 }, colorScheme: 'light' } });

it('plans, creates a run posed until decided, and shows its contention and decisions', async () => {
  await s.page.goto(s.ui.appUrl);
  await s.page.getByTestId('try-example').click();
  const create = s.page.getByTestId('create-run');
  await expect.poll(() => create.textContent(), WAIT).toBe('Create run · 144 calls');

  // The Plan panel: the example's two models, guessed accuracies. A difference of 0.2 is too much for 24 vignettes, and it says so.
  const manifestPath = join(process.cwd(), 'examples', 'demo-manifest.jsonl');
  await s.page.getByTestId('plan-delta').fill('0.2');
  await s.page.getByTestId('plan-accuracy').fill('0.8, 0.6');
  await s.page.getByTestId('plan-run').click();
  await s.page.getByTestId('plan-too-small').waitFor();
  const small = await s.call('plan', { models: ['mock-fast', 'mock-slow'], delta: 0.2, accuracy: [0.8, 0.6], manifestPath });
  expect(small.too_small).toBe(true);
  expect(await s.page.getByTestId('plan-cheapest').count()).toBe(0);
  // A large difference fits: the grid shows every design, the cheapest marked.
  await s.page.getByTestId('plan-delta').fill('0.6');
  await s.page.getByTestId('plan-accuracy').fill('0.95, 0.2');
  await s.page.getByTestId('plan-run').click();
  await s.page.getByTestId('plan-cheapest').waitFor();
  const plan = await s.call('plan', { models: ['mock-fast', 'mock-slow'], delta: 0.6, accuracy: [0.95, 0.2], manifestPath });
  expect(await s.page.locator('[data-testid=plan-grid] tbody tr').count()).toBe(plan.designs.length);
  const cheapest = plan.designs.find((d) => d.cheapest)!;
  const row = await s.page.getByTestId('plan-cheapest').locator('td').allTextContents();
  expect(row.slice(0, 3)).toEqual([String(cheapest.epochs), String(cheapest.vignettes), String(cheapest.calls)]);
  expect(row.at(-1)).toBe('cheapest');
  expect(row[3]).toBe(cheapest.tokens === null ? 'unknown' : formatInt(cheapest.tokens));
  // At the manifest's size: the smallest detectable difference per number of epochs, as the plan says.
  const mde = plan.mde_at_manifest.map((m) => `${m.epochs} epoch${m.epochs === 1 ? '' : 's'} ${m.mde === null ? 'none' : m.mde.toFixed(3)}`).join(', ');
  expect(await s.page.getByTestId('plan-mde').textContent()).toBe(`At the manifest's 24 vignettes, the smallest difference detectable: ${mde}.`);
  // A flip rate and a power go to the plan: epochs now help, and the grid is the contract's for them.
  await s.page.getByTestId('plan-flip-rate').fill('0.05');
  await s.page.getByTestId('plan-power').fill('0.9');
  await s.page.getByTestId('plan-run').click();
  const tuned = await s.call('plan', { models: ['mock-fast', 'mock-slow'], delta: 0.6, accuracy: [0.95, 0.2], flipRate: 0.05, power: 0.9, manifestPath });
  await expect.poll(async () => (await s.page.locator('[data-testid=plan-grid] tbody tr td:nth-child(2)').allTextContents()).join(','), WAIT).toBe(tuned.designs.map((d) => formatInt(d.vignettes)).join(','));
  await s.page.getByTestId('plan-flip-rate').fill('');
  await s.page.getByTestId('plan-power').fill('');
  expect(await s.page.getByTestId('plan-too-small').count()).toBe(0);

  // Until decided: a wrong batch blocks the run, a right one sends it.
  await s.page.getByTestId('until-decided').check();
  await s.page.getByTestId('decide-batch').fill('0');
  await expect.poll(() => create.isDisabled(), WAIT).toBe(true);
  await s.page.getByTestId('decide-batch').fill('6');
  await s.page.getByTestId('decide-order-seed').fill('5');
  await expect.poll(() => create.isDisabled(), WAIT).toBe(false);
  expect(await create.textContent()).toBe('Create run · at most 144 calls');
  await s.page.screenshot({ path: shotPath('until-decided-new-run'), fullPage: true });
  await create.click();
  await s.page.waitForURL(/#\/runs\/r[0-9a-z]+$/);
  const runId = decodeURIComponent(s.page.url().split('#/runs/')[1]!);

  const detail = await s.call('getRun', { runId });
  expect(detail.run.options.untilDecided).toEqual({ alpha: 0.05, margin: 0, orderSeed: 5, batch: 6 });
  await s.page.getByTestId('run-decision').waitFor();
  await expect.poll(() => s.page.locator('.view-header [data-testid=status]').first().textContent(), WAIT).toBe('done');
  // Once the run is over every pair is stopped; the panel says what `decide` says.
  await expect.poll(() => s.page.getByTestId('run-contention').textContent(), WAIT).toBe('Every pair is stopped: no model is posed any more.');
  const decision = await s.call('decide', { runId });
  const pair = decision.pairs[0]!;
  const cells = await s.page.getByTestId('decision-pair').first().locator('td').allTextContents();
  expect(cells[0]).toBe(`${pair.a} − ${pair.b}`);
  expect(cells[1]).toBe(pair.status === 'decided' ? `${pair.winner} better` : pair.status);
  expect(cells[2]).toBe(String(pair.n));
  expect(await s.page.getByTestId('decision-calls').textContent()).toContain(`${decision.calls} of the full sweep's ${decision.calls_full} calls`);
  expect(await s.page.getByTestId('decision-saved').textContent()).toBe(`${formatInt(decision.calls_full - decision.calls)} calls and ${formatUsd(decision.usd_saved)} saved`);
  await s.page.screenshot({ path: shotPath('until-decided-run'), fullPage: true });

  // Results shows the same decision in place of the fixed-n pair matrix.
  await s.page.goto(`${s.ui.origin}/#/results/${runId}`);
  const card = s.page.getByTestId('anytime-decision');
  await card.waitFor(WAIT);
  expect(await s.page.getByTestId('pair-matrix').count()).toBe(0);
  const resultCells = await card.getByTestId('decision-pair').first().locator('td').allTextContents();
  expect(resultCells).toEqual(cells);
  expect(await card.getByTestId('decision-saved').textContent()).toBe(`${formatInt(decision.calls_full - decision.calls)} calls and ${formatUsd(decision.usd_saved)} saved`);
  expect(s.problems).toEqual([]);
});
