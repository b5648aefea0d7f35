/**
 * Runs you can manage, in real Chromium against a real engine: a run named at New run shows its
 * name and a dated header; renamed, tagged and noted from its page; found by the Runs search;
 * archived (hidden until shown); deleted behind a confirmation, its folder gone; a running run
 * offers no delete until cancelled. At 900 and 1280 px the Runs search row and table stay inside
 * the viewport's width (element geometry); axe-core finds nothing on the managed views, light or dark.
 * Runs on: Node (tests), driving Chromium.
 */
import { AxeBuilder } from '@axe-core/playwright';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeManifest } from '../helpers/temp.js';
import { WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

describe('runs you can manage', () => {
  // axe-core needs a page of a context of its own: the session's is.
  const s = useUiSession({ context: { viewport: { width: 1280, height: 860 } } });

  beforeAll(async () => {
    s.ui.engine.scoring.start();
    await s.page.goto(s.ui.appUrl);
    await s.page.getByTestId('try-example').waitFor(WAIT);
  });

  it('names a run at New run, then renames, tags, finds, archives and deletes it', async () => {
    await s.page.goto(`${s.ui.origin}/#/new/example`);
    await expect.poll(() => s.page.getByTestId('create-run').textContent(), WAIT).toBe('Create run · 144 calls');
    await s.page.getByTestId('epochs').fill('1');
    await s.page.getByLabel('Name', { exact: true }).fill('Example, first look');
    await s.page.getByTestId('create-run').click();
    await s.page.waitForURL(/#\/runs\/r[0-9a-z]+$/, WAIT);
    const runId = decodeURIComponent(s.page.url().split('#/runs/')[1]!);
    await expect.poll(() => s.page.getByTestId('run-title').textContent(), WAIT).toBe('Example, first look');
    // The header's date has a year in it, whatever the locale.
    expect(await s.page.locator('.view-header .sub').textContent()).toMatch(new RegExp(`created .*${new Date().getFullYear()}`));
    await expect.poll(() => s.page.locator('.view-header [data-testid=status]').textContent(), WAIT).toBe('done');
    // The example comes with the demo's scorers: its first Results page has a leaderboard.
    expect((await s.ui.engine.service.scoringStatus({ runId })).scorers.map((sc) => sc.name)).toEqual(['exact', 'brief', 'no-hedging']);
    await s.page.goto(`${s.ui.origin}/#/results/${runId}`);
    await expect.poll(() => s.page.locator('[data-testid=leaderboard-table] tbody tr').count(), WAIT).toBe(2);
    await s.page.goto(`${s.ui.origin}/#/runs/${runId}`);
    await s.page.getByTestId('run-manage').waitFor(WAIT);

    await s.page.getByTestId('run-name').fill('מודל בסיס');
    await s.page.getByTestId('run-tags-input').fill('baseline, nov, baseline');
    await s.page.getByTestId('run-notes').fill('before the prompt change');
    await s.page.getByTestId('save-run-details').click();
    await expect.poll(() => s.page.getByTestId('run-title').textContent(), WAIT).toBe('מודל בסיס');
    expect(await s.page.getByTestId('run-title').getAttribute('dir')).toBe('auto');
    expect(await s.ui.engine.service.getRun({ runId })).toMatchObject({ run: { name: 'מודל בסיס', tags: ['baseline', 'nov'], notes: 'before the prompt change' } });

    const other = await s.ui.engine.service.createRun({ manifestPath: writeManifest(s.dir, 3), models: ['mock-fast'], epochs: 1, name: 'another' });
    await s.page.goto(`${s.ui.origin}/#/runs`);
    const rows = s.page.locator('[data-testid=run-row]');
    await expect.poll(() => rows.count(), WAIT).toBe(2);
    await s.page.getByTestId('runs-search').fill('PROMPT change');
    await expect.poll(() => rows.count(), WAIT).toBe(1);
    expect(await rows.first().getAttribute('data-run-id')).toBe(runId);
    expect(await rows.first().getByTestId('run-tags').textContent()).toBe('baselinenov');
    await s.page.getByTestId('runs-search').fill('');

    await s.page.goto(`${s.ui.origin}/#/runs/${runId}`);
    await s.page.getByTestId('archive-run').click();
    await expect.poll(() => s.page.getByTestId('archive-run').textContent(), WAIT).toBe('Bring back from the archive');
    await s.page.goto(`${s.ui.origin}/#/runs`);
    await expect.poll(() => rows.count(), WAIT).toBe(1);
    expect(await rows.first().getAttribute('data-run-id')).toBe(other.id);
    await s.page.getByTestId('show-archived').check();
    await expect.poll(() => rows.count(), WAIT).toBe(2);
    expect(await s.page.locator(`[data-run-id="${runId}"] [data-testid=archived-chip]`).count()).toBe(1);

    await s.page.goto(`${s.ui.origin}/#/runs/${runId}`);
    await s.page.getByTestId('delete-run').click();
    // Nothing happens until confirmed.
    expect((await s.ui.engine.service.listRuns({ archived: 'include' })).map((r) => r.id)).toContain(runId);
    await s.page.getByTestId('confirm-delete').click();
    await s.page.waitForURL(/#\/runs$/, WAIT);
    await expect.poll(() => s.page.locator(`[data-run-id="${runId}"]`).count(), WAIT).toBe(0);
    expect((await s.ui.engine.service.listRuns({ archived: 'include' })).map((r) => r.id)).toEqual([other.id]);
    expect(existsSync(join(s.dir, 'data', 'runs', runId))).toBe(false);
  });

  it('offers no delete for a running run until it is cancelled', async () => {
    const run = await s.ui.engine.service.createRun({ manifestPath: writeManifest(s.dir, 30, 'slow.jsonl'), models: ['mock-slow'], epochs: 3, concurrency: 1 });
    await s.page.goto(`${s.ui.origin}/#/runs/${run.id}`);
    await s.page.getByTestId('delete-needs-cancel').waitFor(WAIT);
    expect(await s.page.getByTestId('delete-run').count()).toBe(0);
    await s.page.getByTestId('cancel-run').click();
    await s.page.getByTestId('confirm-cancel').click();
    await s.page.getByTestId('delete-run').waitFor(WAIT);
  });

  it('keeps Runs and the run page inside the viewport at 900 and 1280 px, and axe-core finds nothing, light or dark', async () => {
    const violations: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      await s.page.emulateMedia({ colorScheme: scheme });
      for (const width of [900, 1280]) {
        await s.page.setViewportSize({ width, height: 800 });
        await s.page.goto(`${s.ui.origin}/#/runs`);
        await s.page.getByTestId('runs-search').waitFor(WAIT);
        const search = (await s.page.getByTestId('runs-search').boundingBox())!;
        expect(search.x + search.width, `search at ${width}`).toBeLessThanOrEqual(width);
        expect(await s.page.evaluate<number>('document.documentElement.scrollWidth'), `Runs at ${width}`).toBeLessThanOrEqual(width);
        if (width === 1280) violations.push(...(await new AxeBuilder({ page: s.page }).analyze()).violations.map((v) => `runs ${scheme}: ${v.id} ${v.help}`));
        const runId = (await s.ui.engine.service.listRuns())[0]!.id;
        await s.page.goto(`${s.ui.origin}/#/runs/${runId}`);
        await s.page.getByTestId('run-manage').waitFor(WAIT);
        const panel = (await s.page.getByTestId('run-manage').boundingBox())!;
        expect(panel.x + panel.width, `manage panel at ${width}`).toBeLessThanOrEqual(width);
        if (width === 1280) violations.push(...(await new AxeBuilder({ page: s.page }).analyze()).violations.map((v) => `run ${scheme}: ${v.id} ${v.help}`));
      }
    }
    expect(violations).toEqual([]);
  });

  it('saw no console error, exception or failed request', () => {
    expect(s.problems).toEqual([]);
  });
});
