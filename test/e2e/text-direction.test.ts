/**
 * Text as people write it, in real Chromium against a real engine: a manifest in Hebrew and
 * Arabic (ids, prompts, targets, metadata) answered by mocks that answer with the target, then
 * every view walked: each piece of text a person or a model wrote sits in an element with
 * `dir="auto"` (so it reads right to left), and a 5,000-word answer starts collapsed to a few
 * lines with "Show all".
 * Runs on: Node (tests), driving Chromium.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

/** Text nodes with right-to-left letters whose nearest `dir` is not `auto` (or is the page's own). Runs in the page. */
const UNDIRECTED = `(() => {
  const bad = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!/[\\u0590-\\u08ff]/.test(n.textContent)) continue;
    const el = n.parentElement;
    if (!el || el.closest('script, style, option, .visually-hidden')) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const holder = el.closest('[dir]');
    if (!holder || holder === document.documentElement || holder.getAttribute('dir') !== 'auto') {
      bad.push(el.tagName.toLowerCase() + '.' + String(el.className).split(' ')[0] + ': ' + n.textContent.trim().slice(0, 30));
    }
  }
  return bad;
})()`;

describe('text as people write it', () => {
  const s = useUiSession({
    engine: (dir) => {
      const catalogPath = join(dir, 'long.json');
      writeFileSync(
        catalogPath,
        JSON.stringify({
          providers: { wordy: { kind: 'mock', trainsOnData: false } },
          models: { 'mock-long': { hosts: [{ provider: 'wordy', model: 'mock-long', contextWindow: 64000, options: { outputTokens: 5000 } }] } },
        }),
      );
      return { catalogPaths: [catalogPath] };
    },
    context: { viewport: { width: 1280, height: 800 } },
  });
  let runId: string;

  beforeAll(async () => {
    const manifest = join(s.dir, 'rtl.jsonl');
    const lines = [
      { id: 'שאלה-1', prompt: 'מהי בירת צרפת?', target: 'פריז', metadata: { נושא: 'גאוגרפיה' } },
      { id: 'שאלה-2', prompt: 'כמה זה שתיים ועוד שתיים?', target: 'ארבע', metadata: { נושא: 'חשבון' } },
      { id: 'سؤال-3', prompt: 'ما هي عاصمة مصر؟', target: 'القاهرة', metadata: { نושא: 'جغرافيا' } },
    ];
    writeFileSync(manifest, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    s.ui.engine.scoring.start();
    const run = await s.ui.engine.service.createRun({
      manifestPath: manifest,
      models: ['mock-strong', 'mock-long'],
      epochs: 2,
      name: 'ריצה ראשונה',
      scorers: { scorers: [{ name: 'exact', type: 'match' }] },
    });
    runId = run.id;
    await s.ui.engine.service.createRun({ manifestPath: manifest, models: ['mock-strong', 'mock-long'], epochs: 2, name: 'ריצה שנייה', scorers: { scorers: [{ name: 'exact', type: 'match' }] } });
    await s.openApp();
  }, 60_000);

  it('gives every id, prompt, answer, name and metadata value in every view dir="auto"', async () => {
    for (const run of await s.ui.engine.service.listRuns()) {
      await expect.poll(async () => (await s.ui.engine.service.scoringStatus({ runId: run.id })).scorers[0]?.done ?? 0, WAIT).toBe(12);
    }
    const other = (await s.ui.engine.service.listRuns()).find((r) => r.id !== runId)!.id;
    const found: string[] = [];
    const walk = async (name: string) => {
      for (const p of await s.page.evaluate<string[]>(UNDIRECTED)) found.push(`${name}: ${p}`);
    };
    const views = [
      { name: 'Runs', hash: '#/runs', ready: '[data-testid=run-row]' },
      { name: 'Run', hash: `#/runs/${runId}`, ready: '[data-testid=run-manage]' },
      { name: 'Results', hash: `#/results/${runId}`, ready: '.matrix-button' },
      { name: 'Compare', hash: `#/compare/${runId}/${other}`, ready: '[data-testid=compare-pairs] tbody tr' },
      { name: 'Responses', hash: `#/responses/${runId}`, ready: '.record' },
      { name: 'Stats', hash: `#/stats/${runId}`, ready: '.stats-layout table' },
      { name: 'Export', hash: `#/export/${runId}`, ready: '[data-testid=export-button]' },
      { name: 'New run, again', hash: `#/new/again/${runId}`, ready: '[data-testid=manifest-preview]' },
    ];
    for (const view of views) {
      await s.page.goto(`${s.ui.origin}/${view.hash}`);
      await s.page.locator(view.ready).first().waitFor(WAIT);
      await walk(view.name);
    }
    // The vignette's answers side by side, from Results and from Responses.
    await s.page.goto(`${s.ui.origin}/#/results/${runId}`);
    await s.page.locator('.matrix-button').first().click();
    await s.page.locator('.score-dialog [data-testid=answer-text]').first().waitFor(WAIT);
    await walk('Results, one vignette');
    await s.page.goto(`${s.ui.origin}/#/responses/${runId}`);
    await s.page.locator('.record').first().click();
    await s.page.locator('.side-by-side [data-testid=answer-text]').first().waitFor(WAIT);
    await walk('Responses, side by side');
    expect(found).toEqual([]);
  });

  it('collapses a 5,000-word answer to a few lines until "Show all"', async () => {
    await s.page.goto(`${s.ui.origin}/#/responses/${runId}`);
    await s.page.locator('.record').first().click();
    await s.page.locator('.side-by-side [data-testid=answer-text][data-collapsed=true]').first().waitFor(WAIT);
    // The first long answer's cell, by position (its attributes change when opened).
    const cells = s.page.locator('.side-by-side .sbs-cell');
    const at = await cells.evaluateAll((els) => els.findIndex((e) => e.querySelector('[data-collapsed=true]') !== null));
    const cell = cells.nth(at);
    const answer = cell.getByTestId('answer-text');
    expect((await answer.boundingBox())!.height).toBeLessThan(200);
    expect(await s.page.evaluate<number>('document.documentElement.scrollHeight')).toBeLessThan(2400);
    await cell.getByTestId('show-all').click();
    expect(await answer.getAttribute('data-collapsed')).toBe('false');
    expect((await answer.boundingBox())!.height).toBeGreaterThan(1000);
    expect(await cell.getByTestId('show-all').textContent()).toBe('Show less');
    // Short answers (the target) show whole, with no button.
    const short = s.page.locator('.side-by-side [data-testid=answer-text]', { hasText: /^(פריז|ארבע|القاهرة)$/ }).first();
    expect(await short.getAttribute('data-collapsed')).toBe('false');
  });

  it('saw no console error, exception or failed request', () => {
    expect(s.problems).toEqual([]);
  });
});
