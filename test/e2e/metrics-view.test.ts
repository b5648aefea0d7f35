/**
 * The Metrics view, in real Chromium against a real engine: reached from the navigation, it shows
 * the router's calls per profile, provider and host (calls, errors, latency, tokens, spend) after
 * a run, and each daily budget window with its limit and the spend it holds; a profile can be
 * picked to see its calls alone. Also writes the screenshots of the Metrics and Models views that
 * docs/guide/app.md shows; axe-core finds nothing on either, light or dark.
 * Runs on: Node (tests), driving Chromium.
 */
import { AxeBuilder } from '@axe-core/playwright';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeManifest } from '../helpers/temp.js';
import { docImagePath, WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

describe('the Metrics view', () => {
  /** A catalog with a mock on a daily budget, written before the engine opens. */
  const cappedCatalog = (dir: string) => {
    const catalogPath = join(dir, 'capped.json');
    writeFileSync(
      catalogPath,
      JSON.stringify({
        providers: { capped: { kind: 'mock', trainsOnData: false, dailyBudget: { calls: 100 } } },
        models: { 'capped-model': { label: 'A mock on a budget', hosts: [{ provider: 'capped', model: 'capped-model', contextWindow: 32000, inputPerMTok: 1, outputPerMTok: 2 }] } },
      }),
    );
    return { catalogPaths: [catalogPath] };
  };
  // axe-core needs a page of a context of its own.
  const s = useUiSession({ engine: cappedCatalog, context: { viewport: { width: 1280, height: 800 } } });
  beforeAll(async () => {
    await s.openApp();
  });

  it("shows a run's calls per profile, provider and host, and the budget window they spend", async () => {
    const run = await s.ui.engine.service.createRun({ manifestPath: writeManifest(s.dir, 10), models: ['capped-model', 'mock-fast'], epochs: 1 });
    await expect.poll(async () => (await s.ui.engine.service.getRun({ runId: run.id })).run.status, WAIT).toBe('done');
    await s.page.getByRole('link', { name: 'Metrics' }).click();
    await s.page.waitForURL(/#\/metrics$/, WAIT);
    const cell = (table: string, row: string, col: string) => s.page.locator(`[data-testid=${table}] [data-row="${row}"] [data-col=${col}]`).textContent();
    await expect.poll(() => cell('metrics-providers', 'capped', 'calls'), WAIT).toBe('10');
    expect(await cell('metrics-providers', 'mock', 'calls')).toBe('10');
    expect(await cell('metrics-hosts', 'capped/capped-model', 'calls')).toBe('10');
    expect(await cell('metrics-profiles', 'default', 'calls')).toBe('20');
    expect(await cell('metrics-profiles', 'default', 'errors')).toBe('0');
    const budget = s.page.locator('[data-testid=budget-windows] [data-row="default/capped"]');
    expect(await budget.locator('td').nth(2).textContent()).toBe('10 / 100 (10%)');
    // The judge profile has the provider's budget too, and nothing spent under it.
    expect(await s.page.locator('[data-testid=budget-windows] [data-row="judge/capped"] td').nth(2).textContent()).toBe('0 / 100 (0%)');

    // One profile alone: its calls, its windows.
    await s.page.getByTestId('metrics-profile').selectOption('judge');
    const windows = () => s.page.locator('[data-testid=budget-windows] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-row')!.split('/')[0]));
    await expect.poll(async () => [...new Set(await windows())], WAIT).toEqual(['judge']);
    expect(await s.page.getByTestId('metrics-providers').count()).toBe(0);
    await s.page.getByTestId('metrics-profile').selectOption('');
    await expect.poll(() => cell('metrics-profiles', 'default', 'calls'), WAIT).toBe('20');
    await s.page.screenshot({ path: docImagePath('metrics-view') });
    // axe-core finds nothing on it (nor on Models), light or dark.
    const violations: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      await s.page.emulateMedia({ colorScheme: scheme });
      for (const hash of ['#/metrics', '#/models']) {
        await s.page.goto(`${s.ui.origin}/${hash}`);
        await s.page.locator('[data-testid=metrics-profiles], [data-testid=roster-table]').first().waitFor(WAIT);
        violations.push(...(await new AxeBuilder({ page: s.page }).analyze()).violations.map((v) => `${hash} ${scheme}: ${v.id} ${v.help}`));
      }
    }
    await s.page.emulateMedia({ colorScheme: 'light' });
    expect(violations).toEqual([]);
  }, 240_000);

  it('lists the usable models first, the others folded away, and filters them', async () => {
    await s.page.getByRole('link', { name: 'Models' }).click();
    await s.page.locator('[data-testid=roster-table] tbody tr').first().waitFor(WAIT);
    const usable = () => s.page.locator('[data-testid=roster-table] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-model')));
    expect(await usable()).toContain('capped-model');
    expect(await usable()).not.toContain('gpt-5.4');
    // The hosted models waiting for a key are folded away until opened.
    expect(await s.page.getByTestId('other-models').getAttribute('open')).toBeNull();
    expect(await s.page.locator('[data-testid=roster-others] [data-model="gpt-5.4"]').count()).toBe(1);
    expect(await s.page.locator('[data-testid=roster-others] [data-model="gpt-5.4"]').isVisible()).toBe(false);
    await s.page.screenshot({ path: docImagePath('models-view') });
    await s.page.getByTestId('models-filter').fill('budget');
    await expect.poll(usable, WAIT).toEqual(['capped-model']);
    expect(await s.page.getByTestId('other-models').count()).toBe(0);
    await s.page.getByTestId('models-filter').fill('gpt-5.4');
    await expect.poll(() => s.page.locator('[data-testid=roster-others] [data-model="gpt-5.4"]').isVisible(), WAIT).toBe(true);
    expect(await s.page.getByTestId('usable-models').textContent()).toContain('No model matching the filter');
  });

  it('saw no console error, exception or failed request', () => {
    expect(s.problems).toEqual([]);
  });
});
