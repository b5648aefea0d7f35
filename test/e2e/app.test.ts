/**
 * The app end to end, as a person uses it: real Chromium against the real `panoptes serve --ui`
 * over a fresh data dir. A newcomer runs the example in three clicks and watches it finish; the
 * charts and tables show the numbers `stats` gives; the responses table filters, prices each call, and shows a
 * vignette's epochs side by side; both exports match the database byte for byte; a manifest with
 * errors is explained line by line and creates nothing. No console error (a CSP violation would
 * be one), exception or failed request is allowed anywhere. Screenshots of every view go to
 * test-results/e2e/.
 * Runs on: Node (tests), driving Chromium.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { csvHeader, toCsvLine, toJsonlLine } from '../../core/export.js';
import { estCostUsd } from '../../core/common/cost.js';
import { databasePath } from '../../core/paths.js';
import { Store } from '../../core/store/store.js';
import { formatCallCost, formatInt, formatUsd } from '../../renderer/src/format.js';
import { shotPath, WAIT, watchPage } from './harness.js';
import { useServedUiSession } from './ui-session.js';

const VIEWPORT = { width: 1400, height: 900 };

describe('the app in a browser (panoptes serve --ui)', () => {
  const s = useServedUiSession({ context: { viewport: VIEWPORT, acceptDownloads: true, colorScheme: 'light' } });
  let store: Store;
  let runId: string;

  const text = async (selector: string) => (await s.page.locator(selector).first().textContent()) ?? '';
  const texts = (selector: string) => s.page.locator(selector).allTextContents();

  // Registered after the session's, so the store closes before the server does.
  afterAll(() => {
    store?.close();
  });

  it('offers the example on first launch: a run in three clicks, watched live to done', async () => {
    await s.page.goto(s.ui.appUrl);
    // The token leaves the address bar at once.
    await expect.poll(() => s.page.url()).toMatch(/#\/runs$/);
    await s.page.getByTestId('try-example').waitFor();
    await s.page.screenshot({ path: shotPath('01-first-launch') });

    await s.page.getByTestId('try-example').click(); // click 1
    const create = s.page.getByTestId('create-run');
    // 24 example vignettes x the 2 default mock models x 3 epochs.
    await expect.poll(() => create.textContent(), WAIT).toBe('Create run · 144 calls');
    expect(await text('[data-testid=vignette-count]')).toBe('24');
    await s.page.screenshot({ path: shotPath('02-new-run'), fullPage: true });

    await create.click(); // click 2
    await s.page.waitForURL(/#\/runs\/r[0-9a-z]+$/);
    runId = decodeURIComponent(s.page.url().split('#/runs/')[1]!);
    await s.page.getByTestId('job-grid').waitFor();
    await s.page.screenshot({ path: shotPath('03-run-live') });
    await expect.poll(() => text('.view-header [data-testid=status]'), WAIT).toBe('done');

    expect(await text('[data-testid=metric-progress]')).toContain('144 / 144');
    expect(await text('[data-testid=metric-jobs]')).toContain('6 / 6');
    expect(await text('[data-testid=job-legend] [data-status=done] strong')).toBe('6');
    const stats = await s.call('stats', { runId });
    expect(await text('[data-testid=metric-tokens]')).toContain(`${formatInt(stats.totalInputTokens)} / ${formatInt(stats.totalOutputTokens)}`);
    expect(await text('[data-testid=metric-cost]')).toContain(formatUsd(stats.totalEstCostUsd));

    // Hover a cell: its job's details.
    const grid = s.page.locator('.job-grid-scroll');
    const box = (await grid.boundingBox())!;
    await s.page.mouse.move(box.x + box.width - 20, box.y + box.height - 12);
    await s.page.locator('.tooltip').waitFor();
    expect(await text('.tooltip')).toMatch(/mock-slow · epoch 3done · 24 \/ 24 vignettesattempt \d+ · local/);
    await s.page.screenshot({ path: shotPath('04-run-done') });

    store = new Store(databasePath(join(s.dir, 'data')), { readonly: true });
    expect(store.queries.getRun(runId)?.status).toBe('done');
  });

  it('charts tokens, calls and cost per model with the numbers stats gives', async () => {
    await s.page.locator('.view-header a', { hasText: 'Stats' }).click();
    await s.page.waitForURL(new RegExp(`#/stats/${runId}$`));
    const stats = await s.call('stats', { runId });
    expect(stats.models.map((m) => m.model)).toEqual(['mock-fast', 'mock-slow']);

    const charts: Array<[string, (m: (typeof stats.models)[number]) => string]> = [
      ['inputTokens', (m) => formatInt(m.inputTokens)],
      ['outputTokens', (m) => formatInt(m.outputTokens)],
      ['calls', (m) => formatInt(m.calls)],
      ['estCostUsd', (m) => formatUsd(m.estCostUsd)],
    ];
    for (const [key, format] of charts) {
      const chart = `[data-testid=chart-${key}]`;
      await expect.poll(() => s.page.locator(`${chart} .recharts-bar-rectangle`).count(), WAIT).toBe(2);
      expect(await texts(`${chart} .recharts-label-list text`)).toEqual(stats.models.map(format));
    }
    for (const m of stats.models) {
      expect(await texts(`[data-testid=stats-table] tr[data-model="${m.model}"] td`)).toEqual([
        m.model,
        formatInt(m.calls),
        formatInt(m.cachedCalls),
        formatInt(m.inputTokens),
        formatInt(m.outputTokens),
        formatInt(m.cachedInputTokens + m.cachedOutputTokens),
        formatUsd(m.estCostUsd),
        formatUsd(m.savedCostUsd),
      ]);
    }
    expect(await texts('[data-testid=stats-table] tr[data-model=total] th')).toEqual([
      'Total',
      formatInt(stats.totalCalls),
      formatInt(stats.totalCachedCalls),
      formatInt(stats.totalInputTokens),
      formatInt(stats.totalOutputTokens),
      formatInt(stats.totalCachedInputTokens + stats.totalCachedOutputTokens),
      formatUsd(stats.totalEstCostUsd),
      formatUsd(stats.totalSavedCostUsd),
    ]);
    await s.page.screenshot({ path: shotPath('05-stats'), fullPage: true });

    // All runs: the totals over every run (here the one run).
    await s.page.getByTestId('run-picker').selectOption('');
    await s.page.waitForURL(/#\/stats$/);
    const all = await s.call('stats', {});
    await expect.poll(() => texts('[data-testid=stats-table] tr[data-model=total] th'), WAIT).toEqual([
      'Total',
      formatInt(all.totalCalls),
      formatInt(all.totalCachedCalls),
      formatInt(all.totalInputTokens),
      formatInt(all.totalOutputTokens),
      formatInt(all.totalCachedInputTokens + all.totalCachedOutputTokens),
      formatUsd(all.totalEstCostUsd),
      formatUsd(all.totalSavedCostUsd),
    ]);
  });

  it('lists responses, filters them by model, epoch and text, and shows a vignette across epochs', async () => {
    await s.page.goto(`${s.ui.origin}/#/responses/${runId}`);
    await expect.poll(() => text('[data-testid=records-status]'), WAIT).toBe('144 loaded of 144 records');

    await s.page.getByTestId('filter-model').selectOption('mock-slow');
    await expect.poll(() => text('[data-testid=records-status]'), WAIT).toBe('72 loaded (all matches)');
    const models = await texts('[data-testid=record-row] > span:nth-child(2)');
    expect(models.length).toBeGreaterThan(5);
    expect(new Set(models)).toEqual(new Set(['mock-slow']));

    await s.page.getByTestId('filter-epoch').selectOption('2');
    await expect.poll(() => text('[data-testid=records-status]'), WAIT).toBe('24 loaded (all matches)');
    expect(new Set(await texts('[data-testid=record-row] > span:nth-child(3)'))).toEqual(new Set(['2']));

    await s.page.getByTestId('filter-text').fill('triage-');
    const expected = await s.call('responses', { runId, model: 'mock-slow', epoch: 2, text: 'triage-' });
    expect(expected.items.length).toBeGreaterThan(0);
    await expect.poll(() => text('[data-testid=records-status]'), WAIT).toBe(`${expected.items.length} loaded (all matches)`);
    expect(await texts('[data-testid=record-row] > span:nth-child(1)')).toEqual(expected.items.map((r) => r.vignetteId));
    // Each call's cost, as the engine priced it at the run's kept prices.
    expect(await texts('[data-testid=record-cost]')).toEqual(expected.items.map(formatCallCost));
    await s.page.screenshot({ path: shotPath('06-responses-filtered') });

    // One vignette, every model and epoch side by side, as stored.
    const vignetteId = expected.items[0]!.vignetteId;
    await s.page.getByTestId('record-row').first().click();
    await s.page.getByTestId('side-by-side').waitFor();
    await expect.poll(() => s.page.locator('.sbs-cell .sbs-text').count(), WAIT).toBe(6);
    const stored = store.queries.responses(runId, { vignetteId }, { limit: 100 }).items;
    for (const r of stored) {
      const row = s.page.locator('.sbs-table tbody tr', { has: s.page.locator(`th:text-is("${r.model}")`) });
      // The answer's own words: what it lacks of the reference answer is shown struck through (<del>), not part of it.
      const own = await row
        .locator('td')
        .nth(r.epoch - 1)
        .locator('.sbs-text')
        .evaluate((el) => [...el.childNodes].filter((n) => n.nodeName !== 'DEL').map((n) => n.textContent).join(''));
      expect(own).toBe(r.response);
    }
    await s.page.screenshot({ path: shotPath('07-side-by-side'), fullPage: true });
  });

  it('exports JSONL and CSV downloads identical to the database, through one-time links', async () => {
    await s.page.goto(`${s.ui.origin}/#/export/${runId}`);
    await expect.poll(() => text('[data-testid=export-count]'), WAIT).toBe('144');
    const rows = [...store.queries.iterateResponses(runId)];
    expect(rows).toHaveLength(144);

    const [jsonl] = await Promise.all([s.page.waitForEvent('download'), s.page.getByTestId('export-button').click()]);
    expect(jsonl.suggestedFilename()).toBe(`${runId}-responses.jsonl`);
    const jsonlPath = join(s.dir, 'export.jsonl');
    await jsonl.saveAs(jsonlPath);
    expect(readFileSync(jsonlPath, 'utf8')).toBe(rows.map((r) => `${toJsonlLine(r)}\n`).join(''));
    await s.page.getByTestId('export-done').waitFor();
    await s.page.screenshot({ path: shotPath('08-export') });

    // The link was good for one download only.
    expect((await fetch(jsonl.url())).status).toBe(401);

    await s.page.getByLabel('CSV').check();
    const [csv] = await Promise.all([s.page.waitForEvent('download'), s.page.getByTestId('export-button').click()]);
    const csvPath = join(s.dir, 'export.csv');
    await csv.saveAs(csvPath);
    // Each call's cost at the run's prices (a cached answer cost nothing).
    const prices = store.queries.runPrices(runId)!;
    const costOf = (r: (typeof rows)[number]) => (r.cached ? 0 : estCostUsd(r.usage, prices[r.model]));
    expect(readFileSync(csvPath, 'utf8')).toBe([csvHeader(), ...rows.map((r) => toCsvLine(r, costOf(r)))].map((l) => `${l}\n`).join(''));
  });

  it('explains a manifest with errors line by line, and every other invalid choice beside its field; creates nothing', async () => {
    const bad = join(s.dir, 'bad-manifest.jsonl');
    writeFileSync(bad, ['{"id":"a","prompt":"fine"}', '{"id":"b","prompt":', '{"id":"c"}', '{"id":"a","prompt":"again"}', ''].join('\n'));
    const runsBefore = await s.call('listRuns', {});

    await s.page.goto(`${s.ui.origin}/#/new`);
    await s.page.getByTestId('manifest-path').fill(bad);
    await s.page.getByTestId('manifest-issues').waitFor(WAIT);
    const issues = await texts('[data-testid=manifest-issues] li');
    expect(issues).toHaveLength(3);
    expect(issues[0]).toMatch(/^line 2 invalid JSON/);
    expect(issues[1]).toBe('line 3 missing "prompt"');
    expect(issues[2]).toBe('line 4 duplicate id "a" (first on line 1)');
    expect(await text('[data-testid=error-manifest]')).toBe('3 lines have errors');
    expect(await s.page.getByTestId('create-run').isDisabled()).toBe(true);

    // The same file uploaded: the same errors.
    await s.page.getByTestId('manifest-path').fill('');
    await s.page.getByTestId('manifest-upload').setInputFiles(bad);
    await expect.poll(() => texts('[data-testid=manifest-issues] li'), WAIT).toEqual(issues);

    // Other fields, each explained where it is.
    await s.page.getByTestId('epochs').fill('0');
    expect(await text('[data-testid=error-epochs]')).toBe('a whole number from 1 to 10,000');
    await s.page.getByTestId('concurrency').fill('2.5');
    expect(await text('[data-testid=error-concurrency]')).toBe('a whole number from 1 to 1,024');
    // A blank form greets no one with errors: the models' shows once the user has acted on the list.
    expect(await s.page.getByTestId('error-models').count()).toBe(0);
    await s.page.locator('[data-model=mock-fast] input').check();
    await s.page.locator('[data-model=mock-fast] input').uncheck();
    expect(await text('[data-testid=error-models]')).toBe('choose at least one model');
    await s.page.locator('[data-model=mock-public] input').check();
    expect(await text('[data-testid=error-models]')).toMatch(/^mock-public: every host trains on prompts, so strict privacy refuses it/);
    await s.page.screenshot({ path: shotPath('09-new-run-errors'), fullPage: true });
    expect(await s.page.getByTestId('create-run').isDisabled()).toBe(true);

    expect(await s.call('listRuns', {})).toEqual(runsBefore);
  });

  it('pins a job from the grid and cancels a running run', async () => {
    await s.page.goto(`${s.ui.origin}/#/new/example`);
    await expect.poll(() => s.page.getByTestId('create-run').textContent(), WAIT).toBe('Create run · 144 calls');
    await s.page.locator('[data-model=mock-fast] input').uncheck();
    await s.page.getByTestId('epochs').fill('100');
    await s.page.getByTestId('concurrency').fill('1');
    await expect.poll(() => s.page.getByTestId('create-run').textContent(), WAIT).toBe('Create run · 2,400 calls');
    await s.page.getByTestId('create-run').click();
    await s.page.waitForURL(/#\/runs\/r[0-9a-z]+$/);
    const slowRun = decodeURIComponent(s.page.url().split('#/runs/')[1]!);
    await expect.poll(() => text('.view-header [data-testid=status]'), WAIT).toBe('running');
    await expect.poll(async () => Number(await text('[data-testid=job-legend] [data-status=done] strong')), WAIT).toBeGreaterThan(0);

    // The first cell is mock-slow at epoch 1: click it to pin its details.
    const grid = s.page.locator('.job-grid-scroll');
    const box = (await grid.boundingBox())!;
    const [x0, y0] = (await grid.getAttribute('data-cell-origin'))!.split(',').map(Number);
    const [cw, ch] = (await grid.getAttribute('data-cell-size'))!.split(',').map(Number);
    await s.page.mouse.click(box.x + x0! + cw! / 2, box.y + y0! + ch! / 2);
    await s.page.getByTestId('job-details').waitFor();
    expect(await text('[data-testid=job-details] h2')).toBe('mock-slow · epoch 1');
    expect(await text('[data-testid=job-details] dl')).toMatch(/Statusdone.*Progress24 \/ 24 vignettes.*Workerlocal/);

    await s.page.getByTestId('cancel-run').click();
    await s.page.getByTestId('confirm-cancel').click();
    await expect.poll(() => text('.view-header [data-testid=status]'), WAIT).toBe('cancelled');
    expect(Number(await text('[data-testid=job-legend] [data-status=cancelled] strong'))).toBeGreaterThan(0);
    expect(await s.page.getByTestId('cancel-run').count()).toBe(0);
    await s.page.screenshot({ path: shotPath('10-run-cancelled') });
    expect(store.queries.getRun(slowRun)?.status).toBe('cancelled');
  });

  it('lists the workers, survives a reload, and follows the system into dark mode', async () => {
    await s.page.goto(`${s.ui.origin}/#/workers`);
    await expect.poll(() => texts('[data-testid=workers-table] tbody td:first-child'), WAIT).toEqual(['local']);
    await s.page.screenshot({ path: shotPath('11-workers') });

    // A reload keeps the token for this tab.
    await s.page.goto(`${s.ui.origin}/#/runs`);
    await s.page.reload();
    await expect.poll(() => s.page.getByTestId('run-row').count(), WAIT).toBe(2);
    await s.page.screenshot({ path: shotPath('12-runs') });

    const dark = await s.browser.newContext({ viewport: VIEWPORT, colorScheme: 'dark' });
    const darkPage = await dark.newPage();
    const darkProblems = watchPage(darkPage);
    await darkPage.goto(s.ui.appUrl);
    await darkPage.getByTestId('run-row').first().waitFor();
    const background = await darkPage.evaluate<string>('getComputedStyle(document.body).backgroundColor');
    expect(background).toBe('rgb(14, 18, 23)');
    await darkPage.screenshot({ path: shotPath('13-runs-dark') });
    await darkPage.goto(`${s.ui.origin}/#/runs/${runId}`);
    await darkPage.getByTestId('job-grid').waitFor();
    await darkPage.screenshot({ path: shotPath('14-run-dark') });
    await dark.close();
    expect(darkProblems).toEqual([]);
  });

  it('saw no console error, CSP violation, exception or failed request', () => {
    expect(s.problems).toEqual([]);
  });
});
