/**
 * Answers next to their scores, in real Chromium against a real engine: the demo's run (its
 * manifest, its scorers, mock-fast against mock-slow over two epochs). Responses shows a column per
 * scorer with the marks the engine stored; "Failures only" leaves exactly the records a scorer
 * failed (as the contract counts them); a scorer's header sorts by it; a metadata field filters;
 * the side-by-side view highlights the words two answers differ by; Export's "Score columns" box
 * downloads the CSV with a column per scorer. A run of two pages sorted by a scorer's column shows,
 * scrolled to its end, every record once in the service's order. Responses is screenshotted for
 * the README (docs/images/responses-scores.png).
 * Runs on: Node (tests), driving Chromium.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { docImagePath, WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

describe('Responses with their scores in a browser', () => {
  const s = useUiSession({ context: { viewport: { width: 1280, height: 800 }, colorScheme: 'light' } });
  let runId: string;
  /** The rows shown: each one's vignette and its score marks. */
  const rows = () =>
    s.page.locator('[data-testid="record-row"]').evaluateAll((els) =>
      els.map((el) => ({ seq: Number(el.getAttribute('data-seq')), marks: [...el.querySelectorAll('.score-cell')].map((c) => c.getAttribute('data-passed') ?? 'none') })),
    );

  beforeAll(async () => {
    const defaults = await s.call('defaults', {});
    const run = await s.scoredRun({
      manifestPath: defaults.exampleManifest,
      models: defaults.defaultModels,
      epochs: 2,
      scorers: JSON.parse(defaults.exampleScoring),
      name: 'demo',
    });
    runId = run.id;
  });

  it('shows a column per scorer with the stored marks, and filters to failures', async () => {
    await s.page.goto(s.ui.appUrl);
    await s.page.goto(`${s.ui.origin}/#/responses/${runId}`);
    const expected = await s.call('responses', { runId, limit: 1000 });
    expect(expected.scorers.map((sc) => sc.name)).toEqual(['exact', 'brief', 'no-hedging']);
    await expect.poll(async () => (await s.page.locator('.records-head [role="columnheader"]').allTextContents()).join('|'), WAIT).toContain('exact');
    await expect.poll(async () => (await rows()).length, WAIT).toBeGreaterThan(5);
    const bySeq = new Map(expected.items.map((r) => [r.seq, r.scores.map((c) => (c === null ? 'none' : String(c.passed)))]));
    for (const r of await rows()) expect(r.marks).toEqual(bySeq.get(r.seq));
    await s.page.screenshot({ path: docImagePath('responses-scores') });
    // The mocks never give the target (every record fails `exact`), but some answers are brief and some not.
    const failures = await s.call('responses', { runId, verdict: 'fail', scorer: 'brief', limit: 1000 });
    expect(failures.items.length).toBeGreaterThan(0);
    expect(failures.items.length).toBeLessThan(expected.items.length);
    await s.page.getByTestId('filter-scorer').selectOption({ label: 'brief' });
    await s.page.getByTestId('filter-failures').check();
    // Every failure, and only failures: the status counts what the store matched, all on one page.
    await expect.poll(() => s.page.getByTestId('records-status').textContent(), WAIT).toContain(`${failures.items.length} loaded`);
    expect(new Set((await rows()).map((r) => r.seq))).toEqual(new Set(failures.items.slice(0, (await rows()).length).map((r) => r.seq)));
    for (const r of await rows()) expect(r.marks[1]).toBe('false');
    await s.page.getByTestId('filter-failures').uncheck();
    await s.page.getByTestId('filter-scorer').selectOption('');
  });

  it("sorts by a scorer's column and filters by a metadata field", async () => {
    const exactCol = 0;
    await s.page.getByTestId(`sort-${(await s.call('responses', { runId, limit: 1 })).scorers[exactCol]!.version}`).click();
    await expect.poll(async () => (await rows())[0]?.marks[exactCol], WAIT).toBe('false');
    const marks = (await rows()).map((r) => r.marks[exactCol]);
    // Ascending by value: every fail (0) before every pass (1).
    expect(marks.indexOf('true') === -1 || marks.lastIndexOf('false') < marks.indexOf('true')).toBe(true);
    const first = await s.call('responses', { runId, limit: 1 });
    const [key, value] = Object.entries(first.items[0]!.metadata ?? {})[0] ?? [];
    expect(key, 'the demo manifest has metadata').toBeDefined();
    const expected = await s.call('responses', { runId, metaKey: key!, metaValue: String(value), limit: 1000 });
    await s.page.getByTestId('filter-meta-key').fill(key!);
    await s.page.getByTestId('filter-meta-value').fill(String(value));
    // The table shows exactly the service's records, once it has loaded them: rows counted right after
    // typing are read mid-reload (none while "Loading…"). The matches are few enough to be all in view
    // (the table renders only the rows in view).
    expect(expected.items.length).toBeGreaterThan(0);
    expect(expected.items.length).toBeLessThan(15);
    const expectedSeqs = expected.items.map((e) => e.seq).sort((a, b) => a - b);
    await expect.poll(() => s.page.getByTestId('records-status').textContent(), WAIT).toContain(`${expected.items.length} loaded`);
    await expect.poll(async () => (await rows()).map((r) => r.seq).sort((a, b) => a - b), WAIT).toEqual(expectedSeqs);
  });

  it('highlights the words two answers differ by, side by side', async () => {
    await s.page.goto(`${s.ui.origin}/#/responses/${runId}`);
    await s.page.locator('[data-testid="record-row"]').first().click();
    const panel = s.page.getByTestId('side-by-side');
    await expect.poll(() => panel.locator('td.sbs-cell').count(), WAIT).toBeGreaterThan(1);
    // mock-fast and mock-slow word their answers differently: some cell differs from the reference.
    await expect.poll(() => panel.locator('[data-testid="answer-text"] ins.diff-added, [data-testid="answer-text"] del.diff-removed').count(), WAIT).toBeGreaterThan(0);
    await panel.getByTestId('diff-against').selectOption('');
    await expect.poll(() => panel.locator('ins.diff-added, del.diff-removed').count(), WAIT).toBe(0);
  });

  it("pages a run of more than one page by a scorer's column as it scrolls: each record once, in the service's order", async () => {
    const defaults = await s.call('defaults', {});
    // 24 vignettes x 2 models x 5 epochs = 240 records: two pages of the view's 200.
    const big = await s.call('createRun', { manifestPath: defaults.exampleManifest, models: defaults.defaultModels, epochs: 5, scorers: JSON.parse(defaults.exampleScoring), name: 'five epochs' });
    await s.ui.engine.scheduler.runToCompletion(big.id);
    await s.ui.engine.scoring.finish(big.id);
    const brief = (await s.call('responses', { runId: big.id, limit: 1 })).scorers[1]!;
    // The service's order, a page of 50 at a time: brief's verdicts are 0 or 1, so ties span every page boundary.
    const expected: number[] = [];
    for (let after: number | undefined, i = 0; i < 20; i++) {
      const got = await s.call('responses', { runId: big.id, sort: 'score', scorer: brief.version, order: 'desc', limit: 50, ...(after === undefined ? {} : { after }) });
      expected.push(...got.items.map((r) => r.seq));
      if (got.nextAfter === null) break;
      after = got.nextAfter;
    }
    expect(expected).toHaveLength(240);
    expect(new Set(expected).size).toBe(240);
    await s.page.goto(`${s.ui.origin}/#/responses/${big.id}`);
    await s.page.getByTestId(`sort-${brief.version}`).click();
    await s.page.getByTestId(`sort-${brief.version}`).click();
    await expect.poll(() => s.page.locator('.records-head [aria-sort="descending"]').count(), WAIT).toBe(1);
    const scroller = s.page.getByTestId('records-scroll');
    const shown = new Map<number, number>();
    // Scroll to the end, reading each rendered row's place and record: the second page loads on the way.
    for (let i = 0; i < 100 && shown.size < 240; i++) {
      const visible = await s.page.locator('[data-testid="record-row"]').evaluateAll((els) => els.map((el) => [Number(el.getAttribute('aria-rowindex')), Number(el.getAttribute('data-seq'))] as const));
      for (const [index, seq] of visible) shown.set(index, seq);
      await scroller.evaluate((el) => el.scrollBy(0, el.clientHeight / 2));
      await s.page.waitForTimeout(50);
    }
    await expect.poll(() => s.page.getByTestId('records-status').textContent(), WAIT).toContain('240 loaded');
    expect([...shown.entries()].sort((a, b) => a[0] - b[0]).map(([, seq]) => seq)).toEqual(expected);
  });

  it('exports the CSV with a column per scorer when the box is ticked', async () => {
    await s.page.goto(`${s.ui.origin}/#/export/${runId}`);
    await s.page.locator('input[name=format][value=csv]').check();
    await s.page.getByTestId('export-scores').check();
    const [download] = await Promise.all([s.page.waitForEvent('download'), s.page.getByTestId('export-button').click()]);
    const path = join(s.dir, 'scored.csv');
    await download.saveAs(path);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines[0]!.split(',').slice(-3)).toEqual(['score:exact', 'score:brief', 'score:no-hedging']);
    expect(lines).toHaveLength(1 + (await s.call('responses', { runId, limit: 1000 })).items.length);
    expect(s.problems).toEqual([]);
  });
});
