/**
 * The app as people use it, in real Chromium against the real `panoptes serve --ui`: a run created
 * with the keyboard alone; its re-run answered from the prompt cache shows its cached calls and the
 * tokens the answers carry; a response's side-by-side view opened from the keyboard lands in view
 * with the focus; the job grid's details by keyboard; every column of Runs and Responses reachable
 * at 900 px; axe-core finds no violation on any view in light or dark; screenshots of each view at
 * 900 and 1280 px. Then, on an in-process server: a run that a `panoptes run` process writes
 * appears live; a cancelled run's jobs are retried from the app; a tab whose server restarted with
 * a new token says what to do, and with the same token recovers by itself; a run's address opens in
 * a new tab.
 * Runs on: Node (tests), driving Chromium.
 */
import { AxeBuilder } from '@axe-core/playwright';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { formatInt } from '../../renderer/src/format.js';
import { runCli } from '../helpers/cli.js';
import { writeManifest } from '../helpers/temp.js';
import { shotPath, WAIT } from './harness.js';
import { useChromium, useServedUiSession } from './ui-session.js';
const WIDTHS = [900, 1280] as const;

/** Presses Tab until the focused element matches `selector` (at most `max` times). */
async function tabTo(page: Page, selector: string, max = 80): Promise<void> {
  for (let i = 0; i < max; i++) {
    if (await page.evaluate<boolean>(`document.activeElement?.matches(${JSON.stringify(selector)}) ?? false`)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${selector}`);
}

/** Each element matching `selector` can be scrolled fully into the viewport and is then what the user sees there. */
async function unreachable(page: Page, selector: string): Promise<string[]> {
  // Runs in the page (a string, since this project's Node typings have no DOM).
  return page.evaluate<string[]>(`(() => {
    const missed = [];
    for (const el of document.querySelectorAll(${JSON.stringify(selector)})) {
      el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
      const r = el.getBoundingClientRect();
      const inView = r.width > 0 && r.left >= 0 && r.right <= window.innerWidth + 0.5 && r.top >= 0 && r.bottom <= window.innerHeight + 0.5;
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      if (!inView || !(hit === el || el.contains(hit))) missed.push(el.textContent.trim() || el.tagName);
    }
    return missed;
  })()`);
}

async function axeViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(' | ')})`);
}

describe('the app as people use it (panoptes serve --ui)', () => {
  const s = useServedUiSession({ context: { viewport: { width: 1280, height: 860 }, colorScheme: 'light' } });
  let firstRun: string;
  let rerun: string;

  it('creates a run with the keyboard alone; every field has a name', async () => {
    await s.page.goto(s.ui.appUrl);
    await s.page.getByTestId('try-example').waitFor(WAIT);
    await tabTo(s.page, '[data-testid=try-example]');
    await s.page.keyboard.press('Enter');
    await expect.poll(() => s.page.getByTestId('create-run').textContent(), WAIT).toBe('Create run · 144 calls');
    // The fields are found by their accessible names.
    for (const name of ['Epochs', 'Concurrency', 'Privacy', 'Temperature', 'Max tokens', 'Seed']) {
      expect(await s.page.getByLabel(name, { exact: true }).count(), name).toBe(1);
    }
    await s.page.getByRole('group', { name: 'Models' }).waitFor();
    // The price is known before Create.
    expect(await s.page.getByTestId('estimate-cost').textContent()).toMatch(/^\$\d/);

    await s.page.getByLabel('Epochs', { exact: true }).focus();
    await s.page.keyboard.press('Control+A');
    await s.page.keyboard.type('1');
    await expect.poll(() => s.page.getByTestId('create-run').textContent(), WAIT).toBe('Create run · 48 calls');
    await tabTo(s.page, '[data-testid=create-run]');
    await s.page.keyboard.press('Enter');
    await s.page.waitForURL(/#\/runs\/r[0-9a-z]+$/, WAIT);
    firstRun = decodeURIComponent(s.page.url().split('#/runs/')[1]!);
    await expect.poll(() => s.page.locator('.view-header [data-testid=status]').textContent(), WAIT).toBe('done');
    expect(await s.page.getByTestId('metric-cached').textContent()).toContain('0 calls');
  });

  it('a re-run answered from the cache shows its cached calls and the tokens the answers carry', async () => {
    await s.page.goto(`${s.ui.origin}/#/new/example`);
    await expect.poll(() => s.page.getByTestId('create-run').textContent(), WAIT).toBe('Create run · 144 calls');
    await s.page.getByTestId('epochs').fill('1');
    await s.page.getByTestId('create-run').click();
    await s.page.waitForURL((url) => /#\/runs\/r[0-9a-z]+$/.test(url.hash) && !url.hash.endsWith(firstRun), WAIT);
    rerun = decodeURIComponent(s.page.url().split('#/runs/')[1]!);
    await expect.poll(() => s.page.locator('.view-header [data-testid=status]').textContent(), WAIT).toBe('done');
    const stats = await s.call('stats', { runId: rerun });
    expect(stats.totalCachedCalls).toBe(48);
    expect(stats.totalInputTokens).toBe(0);
    expect(await s.page.getByTestId('metric-cached').textContent()).toContain(
      `48 calls${formatInt(stats.totalCachedInputTokens)} / ${formatInt(stats.totalCachedOutputTokens)} tokens`,
    );
    expect(await s.page.locator('[data-testid=run-usage] tr[data-model=mock-fast] [data-col=cached-calls]').textContent()).toBe('24');
    await s.page.screenshot({ path: shotPath('usability-rerun-from-cache') });

    await s.page.goto(`${s.ui.origin}/#/stats/${rerun}`);
    await s.page.getByTestId('chart-inputTokens-cached').waitFor(WAIT);
    // The cached tokens are charted, not an empty chart.
    expect(await s.page.locator('[data-testid=chart-inputTokens] .recharts-label-list text').allTextContents()).toEqual(
      stats.models.map((m) => formatInt(m.cachedInputTokens)),
    );
  });

  it('opens a vignette side by side from the keyboard, in view and focused', async () => {
    await s.page.goto(`${s.ui.origin}/#/responses/${firstRun}`);
    await expect.poll(() => s.page.getByTestId('records-status').textContent(), WAIT).toBe('48 loaded of 48 records');
    await s.page.getByTestId('filter-text').focus();
    await tabTo(s.page, '[data-testid=record-row]');
    const focused = () => s.page.evaluate<string | null>(`document.activeElement?.getAttribute('data-testid') ?? null`);
    const vignette = await s.page.locator('[data-testid=record-row][aria-rowindex="2"] span').first().textContent();
    // Down, then Enter at once, as a quick hand types them: the panel opens on the second row's vignette.
    await s.page.keyboard.press('ArrowDown');
    await s.page.keyboard.press('Enter');
    const panel = s.page.getByTestId('side-by-side');
    await panel.waitFor(WAIT);
    await expect.poll(focused, WAIT).toBe('side-by-side');
    // Once its records have come (two models, one epoch), the panel still holds the focus: nothing took it back meanwhile.
    await expect.poll(() => panel.locator('.sbs-text').count(), WAIT).toBe(2);
    expect(await focused()).toBe('side-by-side');
    const box = (await panel.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y).toBeLessThan(860);
    expect(await panel.locator('h2 .mono').textContent()).toBe(vignette);
    await s.page.keyboard.press('Escape');
    await expect.poll(() => panel.count(), WAIT).toBe(0);
    // Closing gives the focus back to the row the panel was opened from.
    await expect.poll(focused, WAIT).toBe('record-row');
    expect(await s.page.evaluate<string | null>(`document.activeElement?.getAttribute('aria-rowindex') ?? null`)).toBe('2');
  });

  it("shows a job's details from the keyboard", async () => {
    await s.page.goto(`${s.ui.origin}/#/runs/${firstRun}`);
    await s.page.getByTestId('job-grid').waitFor(WAIT);
    await s.page.getByRole('group', { name: /^Jobs, one cell per model and epoch/ }).focus();
    await s.page.keyboard.press('ArrowRight');
    await s.page.getByTestId('job-details').waitFor(WAIT);
    expect(await s.page.getByTestId('job-details').locator('h2').textContent()).toBe('mock-fast · epoch 1');
    await s.page.keyboard.press('ArrowDown');
    await expect.poll(() => s.page.getByTestId('job-details').locator('h2').textContent(), WAIT).toBe('mock-slow · epoch 1');
    await s.page.keyboard.press('Escape');
    await expect.poll(() => s.page.getByTestId('job-details').count(), WAIT).toBe(0);
  });

  it('reaches every column of Runs and Responses at 900 px', async () => {
    await s.page.setViewportSize({ width: 900, height: 800 });
    await s.page.goto(`${s.ui.origin}/#/runs`);
    await s.page.getByTestId('runs-table').waitFor(WAIT);
    expect(await unreachable(s.page, '[data-testid=runs-table] thead th')).toEqual([]);
    await s.page.goto(`${s.ui.origin}/#/responses/${firstRun}`);
    await expect.poll(() => s.page.getByTestId('records-status').textContent(), WAIT).toBe('48 loaded of 48 records');
    expect(await unreachable(s.page, '.records-head [role=columnheader]')).toEqual([]);
    await s.page.goto(`${s.ui.origin}/#/stats/${firstRun}`);
    await s.page.getByTestId('stats-table').waitFor(WAIT);
    expect(await unreachable(s.page, '[data-testid=stats-table] thead th')).toEqual([]);
  });

  it('has no axe-core violation on any view, light or dark, and is photographed at 900 and 1280 px', async () => {
    const views: Array<[string, string, string]> = [
      ['runs', '#/runs', '[data-testid=runs-table]'],
      ['new-run', '#/new/example', '[data-testid=manifest-preview]'],
      ['run', `#/runs/${firstRun}`, '[data-testid=job-grid]'],
      ['stats', `#/stats/${rerun}`, '[data-testid=stats-table]'],
      ['responses', `#/responses/${firstRun}`, '[data-testid=record-row]'],
      ['export', `#/export/${firstRun}`, '[data-testid=export-button]'],
      ['workers', '#/workers', 'h1'],
    ];
    const violations: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      await s.page.emulateMedia({ colorScheme: scheme });
      for (const width of WIDTHS) {
        await s.page.setViewportSize({ width, height: 860 });
        for (const [name, hash, ready] of views) {
          await s.page.goto(`${s.ui.origin}/${hash}`);
          await s.page.locator(ready).first().waitFor(WAIT);
          if (width === 1280) violations.push(...(await axeViolations(s.page)).map((v) => `${name} (${scheme}): ${v}`));
          await s.page.screenshot({ path: shotPath(`view-${name}-${width}-${scheme}`), fullPage: true });
        }
      }
    }
    expect(violations).toEqual([]);
  }, 300_000);

  it('saw no console error, exception or failed request', () => {
    expect(s.problems).toEqual([]);
  });
});

describe('the app across processes and restarts', () => {
  // Each test starts, stops and restarts its own server over the same data folder.
  const s = useChromium();

  it('shows a run that a `panoptes run` process writes, live, to its end', async () => {
    const dataDir = join(s.dir, 'data');
    // This server runs nothing itself: whatever moves is written by the other process.
    await s.startUi({ startScheduler: false });
    const page = await s.browser.newPage();
    await page.goto(s.ui.appUrl);
    await page.getByTestId('try-example').waitFor(WAIT);
    const res = await runCli(['run', '--manifest', writeManifest(s.dir, 6), '--models', 'mock-fast', '--epochs', '2', '--json', '--data-dir', dataDir]);
    expect(res.code).toBe(0);
    const runId = (JSON.parse(res.stdout) as { run_id: string }).run_id;
    const row = page.locator(`[data-testid=run-row][data-run-id="${runId}"]`);
    await expect.poll(() => row.count(), WAIT).toBe(1);
    await expect.poll(() => row.locator('[data-testid=status]').textContent(), WAIT).toBe('done');
    await page.close();
  });

  it('retries a cancelled run\'s jobs from the app: the same run ends done, each call once', async () => {
    await s.startUi();
    const service = s.ui.engine.service;
    const run = await service.createRun({ manifestPath: writeManifest(s.dir, 30, 'retry.jsonl'), models: ['mock-slow'], epochs: 3, concurrency: 1 });
    await expect.poll(async () => (await service.getRun({ runId: run.id })).run.calls, WAIT).toBeGreaterThan(0);
    await service.cancelRun({ runId: run.id });
    const page = await s.browser.newPage();
    await page.goto(s.ui.appUrl);
    await page.goto(`${s.ui.origin}/#/runs/${run.id}`);
    await expect.poll(() => page.locator('.view-header [data-testid=status]').textContent(), WAIT).toBe('cancelled');
    const before = (await service.getRun({ runId: run.id })).run.calls;
    expect(before).toBeLessThan(90);
    await page.getByTestId('retry-failed').click();
    await expect.poll(() => page.locator('.view-header [data-testid=status]').textContent(), WAIT).toBe('done');
    expect(page.url()).toContain(`#/runs/${run.id}`);
    const after = await service.getRun({ runId: run.id });
    expect(after.run.calls).toBe(90);
    expect(after.jobs.every((j) => j.status === 'done' && j.vignettesDone === 30)).toBe(true);
    // Nothing left to retry: the button is gone, and the contract says why if asked.
    expect(await page.getByTestId('retry-failed').count()).toBe(0);
    await expect(service.retryRun({ runId: run.id, scope: 'failed' })).rejects.toThrow(/no failed or cancelled job/);
    // The whole run again is a new run, through New run filled from this one.
    await page.getByTestId('retry-all').click();
    await page.waitForURL(new RegExp(`#/new/again/${run.id}$`), WAIT);
    await expect.poll(() => page.getByTestId('create-run').textContent(), WAIT).toBe('Create run · 90 calls');
    await page.getByTestId('create-run').click();
    await page.waitForURL((url) => /#\/runs\/r[0-9a-z]+$/.test(url.hash) && !url.hash.endsWith(run.id), WAIT);
    await page.close();
  });

  it('a restarted server: a new token is explained, the same token recovers, and a run opens in a new tab', async () => {
    await s.startUi({ startScheduler: false, token: 'first-token-0123456789abcdef' });
    const port = s.ui.port;
    const context = await s.browser.newContext();
    const page = await context.newPage();
    await page.goto(s.ui.appUrl);
    await expect.poll(() => page.getByTestId('connection').textContent(), WAIT).toBe('live');

    // A run's address opens that run in a new tab of the same browser session.
    const runId = (await s.ui.engine.service.listRuns({ limit: 1 }))[0]!.id;
    const link = page.locator(`[data-testid=run-row][data-run-id="${runId}"] a`);
    await link.waitFor(WAIT);
    const [tab] = await Promise.all([context.waitForEvent('page'), link.click({ modifiers: ['Control'] })]);
    await tab.getByTestId('job-grid').waitFor(WAIT);
    expect(tab.url()).toContain(`#/runs/${runId}`);
    await tab.close();

    // Restarted with a new token: the tab says what to do instead of reconnecting for ever.
    await s.startUi({ startScheduler: false, port, token: 'second-token-0123456789abcdef' });
    await page.getByTestId('token-refused').waitFor(WAIT);
    expect(await page.getByTestId('token-refused').textContent()).toMatch(/open the address it printed/i);
    expect(await page.getByTestId('connection').textContent()).toBe('token refused');
    await page.screenshot({ path: shotPath('usability-token-refused') });
    // The new address works in the same tab.
    await page.goto(s.ui.appUrl);
    await page.reload();
    await expect.poll(() => page.getByTestId('connection').textContent(), WAIT).toBe('live');

    // Restarted with the same token (as npm start does): the tab recovers by itself.
    await s.startUi({ startScheduler: false, port, token: 'second-token-0123456789abcdef' });
    await expect.poll(() => page.getByTestId('connection').textContent(), WAIT).toBe('live');
    expect(await page.getByTestId('token-refused').count()).toBe(0);
    await context.close();
  });
});
