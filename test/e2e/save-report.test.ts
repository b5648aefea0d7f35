/**
 * Save report and prompt variants in the Results view, in real Chromium against a real engine: a
 * run whose vignettes name two prompt variants over the same items shows one leaderboard row per
 * (model, variant) arm and says it compares variants; Save report downloads one self-contained
 * HTML page whose embedded report equals the contract's report to the digit, and the page, opened
 * from disk, makes no request and logs no error. The Export view's inspect format downloads one tar
 * of the run's inspect_ai logs. Compare runs says the rows are arms too.
 * Runs on: Node (tests), driving Chromium.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { x as extractTar } from 'tar';
import { beforeAll, describe, expect, it } from 'vitest';
import { shotPath, WAIT, watchPage } from './harness.js';
import { useUiSession } from './ui-session.js';

const ITEMS = 15;
const SCORING = { scorers: [{ name: 'exact', type: 'match' as const }] };

function writeVariantManifest(dir: string, name: string): string {
  const lines: string[] = [];
  for (const variant of ['plain', 'terse']) {
    for (let i = 0; i < ITEMS; i++) {
      const prompt = `${variant === 'terse' ? 'One letter. ' : ''}Question ${i}: which option?`;
      lines.push(JSON.stringify({ id: `${variant}:q${i}`, prompt, target: 'ABCD'[i % 4], metadata: { variant, item: `q${i}` } }));
    }
  }
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

describe('Save report, the inspect download and prompt variants in a browser', () => {
  const s = useUiSession({ startScheduler: false, context: { viewport: { width: 1280, height: 900 }, acceptDownloads: true } });
  const call = s.call;
  let runId: string;

  async function scoredRun(manifest: string): Promise<string> {
    return (await s.scoredRun({ manifestPath: manifest, models: ['mock-strong', 'mock-weak'], epochs: 2, scorers: SCORING })).id;
  }

  beforeAll(async () => {
    runId = await scoredRun(writeVariantManifest(s.dir, 'variants.jsonl'));
  });

  it('shows a leaderboard row per (model, variant) and says the arms are paired by item', async () => {
    await s.page.goto(s.ui.appUrl);
    await s.page.goto(`${s.ui.origin}/#/results/${runId}`);
    await s.page.getByTestId('report-variants').waitFor(WAIT);
    expect(await s.page.getByTestId('report-variants').textContent()).toContain('Prompt variants plain, terse');
    const report = await call('report', { runId });
    const rows = await s.page.locator('[data-testid=leaderboard-table] tbody tr th').allTextContents();
    expect(rows.sort()).toEqual(report.models.map((m) => m.model).sort());
    expect(rows).toContain('mock-strong · terse');
    await s.page.screenshot({ path: shotPath('results-variants'), fullPage: true });
    expect(s.problems).toEqual([]);
  });

  it('downloads the report as one HTML page whose numbers are the report\'s, and which opens from disk with no request', async () => {
    const [download] = await Promise.all([s.page.waitForEvent('download', WAIT), s.page.getByTestId('save-report').click()]);
    expect(download.suggestedFilename()).toBe(`${runId}-exact-report.html`);
    const file = join(s.dir, 'saved-report.html');
    await download.saveAs(file);
    await s.page.getByTestId('save-report-done').waitFor(WAIT);
    expect(await s.page.getByTestId('save-report-done').textContent()).toContain(`${ITEMS * 2} of ${ITEMS * 2} vignettes listed`);

    const html = readFileSync(file, 'utf8');
    const embedded = JSON.parse(/<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html)![1]!);
    expect(embedded).toEqual(await call('report', { runId, scorer: 'exact', reducer: 'mean' }));
    expect(embedded.variants).toEqual(['plain', 'terse']);

    const opened = await s.browser.newPage();
    const requests: string[] = [];
    opened.on('request', (r) => {
      if (!r.url().startsWith('file:')) requests.push(r.url());
    });
    const openedProblems = watchPage(opened);
    await opened.goto(pathToFileURL(file).href);
    expect(await opened.locator('h1').textContent()).toBe(`Run ${runId}`);
    expect(await opened.locator('body').textContent()).toContain('Prompt variants plain, terse');
    expect(requests).toEqual([]);
    expect(openedProblems).toEqual([]);
    await opened.close();
    expect(s.problems).toEqual([]);
  });

  it('downloads the inspect export from the Export view as one tar of the logs inspect reads', async () => {
    await s.page.goto(`${s.ui.origin}/#/export/${runId}`);
    await s.page.getByLabel('inspect').check();
    const [download] = await Promise.all([s.page.waitForEvent('download', WAIT), s.page.getByTestId('export-button').click()]);
    expect(download.suggestedFilename()).toBe(`${runId}-inspect.tar`);
    const archive = join(s.dir, 'inspect.tar');
    await download.saveAs(archive);
    const out = join(s.dir, 'inspect');
    mkdirSync(out);
    await extractTar({ file: archive, cwd: out });
    const logs = readdirSync(out).filter((f) => f !== 'eval-set.json');
    expect(readdirSync(out)).toContain('eval-set.json');
    // A run of prompt variants: one log per model and variant (2 x 2), each that arm's samples.
    expect(logs).toHaveLength(4);
    const arms: string[] = [];
    for (const f of logs) {
      const log = JSON.parse(readFileSync(join(out, f), 'utf8'));
      expect(log.eval.eval_set_id).toBe(`panoptes-${runId}`);
      arms.push(`${log.eval.model}|${log.eval.task_args.variant}`);
      expect(log.samples).toHaveLength(ITEMS * 2);
    }
    expect(new Set(arms).size).toBe(4);
    // The link was good for one download only.
    expect((await fetch(download.url())).status).toBe(401);
    expect(s.problems).toEqual([]);
  });

  it('Compare runs says the rows are arms when the runs have variants', async () => {
    const other = await scoredRun(writeVariantManifest(s.dir, 'variants-again.jsonl'));
    await s.page.goto(`${s.ui.origin}/#/compare/${runId}/${other}`);
    await s.page.getByTestId('report-variants').waitFor(WAIT);
    expect(await s.page.getByTestId('report-variants').textContent()).toContain('Prompt variants plain, terse');
    expect(s.problems).toEqual([]);
  });
});
