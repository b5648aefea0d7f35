/**
 * Every view's layout at 1280x800 and 900x700, light and dark, in real Chromium against a real
 * engine, checked by element geometry (never screenshots): the page never scrolls sideways; it
 * never scrolls past its content into blank space; a table wider than its card scrolls inside it
 * with a visible cue; table headers do not run into each other; ids show in full (wrapped, or cut
 * with the whole id on hover); numbers such as "3,816 / 10,299" stay on one line; the Models view
 * lists the usable models first and is short.
 * Runs on: Node (tests), driving Chromium.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { writeManifest } from '../helpers/temp.js';
import { shotPath, WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';
const SIZES = [
  { width: 1280, height: 800 },
  { width: 900, height: 700 },
] as const;

/**
 * What is wrong with the open view's layout, as sentences (an empty list: nothing). Runs in the
 * page (a string, since this project's Node typings have no DOM).
 */
const LAYOUT_PROBLEMS = `(() => {
  const problems = [];
  const doc = document.documentElement;
  const name = (el) => el.getAttribute('data-testid') || el.getAttribute('aria-label') || (el.className && String(el.className).split(' ')[0]) || el.tagName;
  if (doc.scrollWidth > doc.clientWidth + 1) problems.push('the page scrolls sideways: ' + doc.scrollWidth + ' > ' + doc.clientWidth);
  // Blank space: the document may be no taller than the app's frame (or the window).
  const app = document.querySelector('.app');
  const tall = Math.max(app.getBoundingClientRect().height, window.innerHeight);
  if (doc.scrollHeight > tall + 2) problems.push('the page scrolls ' + Math.round(doc.scrollHeight - tall) + ' px past its content');
  const visible = (el) => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden'; };
  // Content wider than its box is cut unless the box scrolls, and a box that scrolls sideways says so.
  for (const el of document.querySelectorAll('.main *')) {
    if (!visible(el) || el.matches('input, textarea, select')) continue;
    const style = getComputedStyle(el);
    const over = el.scrollWidth - el.clientWidth;
    if (over <= 1) continue;
    if (style.overflowX === 'auto' || style.overflowX === 'scroll') {
      // The job grid and the Responses list are virtual: they draw what is in view.
      if (el.matches('.job-grid-scroll, .records-scroll')) continue;
      const cue = el.parentElement && el.parentElement.querySelector(':scope > .scroll-cue');
      if (el.scrollLeft + el.clientWidth < el.scrollWidth - 1 && !(cue && visible(cue))) problems.push(name(el) + ' hides ' + over + ' px to the right without a scroll cue');
    } else if (style.overflowX === 'hidden' || style.overflowX === 'clip') {
      // An ellipsis with the whole text on hover is a choice, not a cut.
      if (style.textOverflow === 'ellipsis' && el.hasAttribute('title')) continue;
      if (el.matches('.visually-hidden, .progress-track')) continue;
      problems.push(name(el) + ' cuts ' + over + ' px of "' + el.textContent.trim().slice(0, 40) + '"');
    }
  }
  // Headers of the Responses list must not run into each other.
  const heads = [...document.querySelectorAll('.records-head > *')];
  for (let i = 0; i < heads.length; i++) {
    const h = heads[i];
    if (h.scrollWidth > h.clientWidth + 1) problems.push('header "' + h.textContent + '" overflows its column');
    const next = heads[i + 1];
    if (!next) continue;
    // The texts, not the boxes: a right-aligned title beside a left-aligned one reads as one word.
    const textBox = (el) => { const r = document.createRange(); r.selectNodeContents(el); return r.getBoundingClientRect(); };
    if (textBox(next).left - textBox(h).right < 10) problems.push('headers "' + h.textContent.trim() + '" and "' + next.textContent.trim() + '" run together');
  }
  // Numbers on one line: a cell or figure of digits and separators wraps nowhere.
  const NUMBER = /^[\\s$€£~≈<>+−\\-]*[\\d.,]+(\\s*[%a-zµ]*)?(\\s*\\/\\s*[\\d.,]+)?\\s*$/i;
  for (const el of document.querySelectorAll('.main td, .main th, .main .metric-value, .main .num')) {
    if (!visible(el) || el.children.length > 0) continue;
    const text = el.textContent.trim();
    if (!NUMBER.test(text) || !/\\d/.test(text)) continue;
    const range = document.createRange();
    range.selectNodeContents(el);
    const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
    if (tops.size > 1) problems.push('"' + text + '" wraps onto ' + tops.size + ' lines');
    else if (el.scrollWidth > el.clientWidth + 1) problems.push('"' + text + '" spills out of its box');
  }
  // Ids in full: a record's id shows the whole id, or a cut one with the whole id on hover.
  for (const el of document.querySelectorAll('[data-full-id]')) {
    const full = el.getAttribute('data-full-id');
    const shown = el.textContent.trim();
    const cut = el.scrollWidth > el.clientWidth + 1;
    if (shown !== full) problems.push('id ' + full + ' shows as "' + shown + '"');
    else if (cut && el.getAttribute('title') !== full) problems.push('id ' + full + ' is cut without a title');
  }
  return problems;
})()`;

describe('layout of every view at 1280 and 900 px, light and dark', () => {
  const s = useUiSession({ context: { viewport: SIZES[0] } });
  let runA: string;
  let runB: string;

  beforeAll(async () => {
    s.ui.engine.scoring.start();
    const defaults = await s.ui.engine.service.defaults();
    const scorers = JSON.parse(defaults.exampleScoring) as unknown;
    const make = async (name: string) =>
      (await s.ui.engine.service.createRun({ manifestPath: defaults.exampleManifest, models: defaults.defaultModels, epochs: 3, name, scorers } as never)).id;
    runA = await make('Layout baseline, a long run name to see how titles wrap in narrow windows');
    runB = await make('Layout again');
    await s.ui.engine.service.createRun({ manifestPath: writeManifest(s.dir, 40), models: ['mock-fast'], epochs: 1 });
    for (const runId of [runA, runB]) {
      await vi.waitFor(async () => {
        expect((await s.ui.engine.service.getRun({ runId })).run.status).toBe('done');
        expect((await s.ui.engine.service.scoringStatus({ runId })).scorers.every((sc) => sc.pending === 0)).toBe(true);
      }, WAIT);
    }
    await s.page.goto(s.ui.appUrl);
    await s.page.locator('[data-testid=run-row]').first().waitFor(WAIT);
  }, 120_000);

  const views = () => [
    { name: 'Runs', hash: '#/runs', ready: '[data-testid=run-row]' },
    { name: 'New run', hash: '#/new/example', ready: '[data-testid=manifest-preview]' },
    { name: 'Run', hash: `#/runs/${runA}`, ready: '[data-testid=run-manage]' },
    { name: 'Results', hash: `#/results/${runA}`, ready: '[data-testid=leaderboard-table] tbody tr' },
    { name: 'Compare', hash: `#/compare/${runA}/${runB}`, ready: '[data-testid=compare-pairs] tbody tr' },
    { name: 'Stats', hash: `#/stats/${runA}`, ready: '.stats-layout table' },
    { name: 'Responses', hash: `#/responses/${runA}`, ready: '.record' },
    { name: 'Export', hash: `#/export/${runA}`, ready: '[data-testid=export-button]' },
    { name: 'Models', hash: '#/models', ready: '[data-testid=roster-table] tbody tr' },
    { name: 'Workers', hash: '#/workers', ready: '[data-testid=listener-card]' },
    { name: 'Metrics', hash: '#/metrics', ready: '[data-testid=metrics-profiles]' },
  ];

  it('keeps every view inside the window, without blank scroll space, cut text or wrapped numbers', async () => {
    const found: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      await s.page.emulateMedia({ colorScheme: scheme });
      for (const size of SIZES) {
        await s.page.setViewportSize(size);
        for (const view of views()) {
          await s.page.goto(`${s.ui.origin}/${view.hash}`);
          await s.page.locator(view.ready).first().waitFor(WAIT);
          // Let late fetches (charts, previews) settle their layout.
          await s.page.waitForTimeout(300);
          for (const p of await s.page.evaluate<string[]>(LAYOUT_PROBLEMS)) found.push(`${view.name} at ${size.width} ${scheme}: ${p}`);
          await s.page.screenshot({ path: shotPath(`layout-${view.name.toLowerCase().replace(' ', '-')}-${size.width}-${scheme}`), fullPage: true });
        }
      }
    }
    expect(found).toEqual([]);
  }, 240_000);

  it("shows a record's ids whole when the keyboard is on its row, and the run picker names runs with their dates", async () => {
    await s.page.setViewportSize(SIZES[1]!);
    await s.page.goto(`${s.ui.origin}/#/responses/${runA}`);
    const row = s.page.locator('[data-testid=record-row]').first();
    await row.waitFor(WAIT);
    expect(await s.page.getByTestId('focused-record').isVisible()).toBe(false);
    await row.focus();
    const id = (await row.locator('[data-full-id]').first().getAttribute('data-full-id'))!;
    const label = (await row.getAttribute('aria-label'))!;
    const [, model, epoch] = /^.*, (.+), epoch (\d+): /.exec(label)!;
    await expect.poll(() => s.page.getByTestId('focused-record').textContent(), WAIT).toBe(`${id} · ${model} · epoch ${epoch}`);
    expect(await s.page.getByTestId('focused-record').isVisible()).toBe(true);
    await row.blur();
    await expect.poll(() => s.page.getByTestId('focused-record').isVisible(), WAIT).toBe(false);
    // The picker: the run's name, its id, and the day it was made (not a bare time).
    const year = String(new Date().getFullYear());
    const option = (await s.page.getByTestId('run-picker').locator(`option[value="${runB}"]`).textContent())!;
    expect(option.startsWith(`Layout again · ${runB} · `)).toBe(true);
    expect(option).toContain(year);
    await s.page.setViewportSize(SIZES[0]!);
  });

  it('lists the usable models first and keeps the Models view short', async () => {
    await s.page.setViewportSize(SIZES[0]);
    await s.page.goto(`${s.ui.origin}/#/models`);
    await s.page.locator('[data-testid=roster-table] tbody tr').first().waitFor(WAIT);
    const height = await s.page.evaluate<number>('document.documentElement.scrollHeight');
    expect(height).toBeLessThan(2 * SIZES[0].height);
  });

  it('saw no console error, exception or failed request', () => {
    expect(s.problems).toEqual([]);
  });
});
