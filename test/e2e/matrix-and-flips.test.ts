/**
 * Results' vignette grid and Compare's changed verdicts, in real Chromium against a real engine:
 * two stored runs of 120 vignettes (the known-accuracy answers of `mock-strong`, right 90 % of the
 * time in the base and 50 % in the head) scored by the match rule. The grid pages through every
 * vignette, 50 at a time, and searches them, each page the service's own; Compare lists the
 * vignettes that went from pass to fail and back per model, the service's lists, and one opens
 * both runs' answers.
 * Runs on: Node (tests), driving Chromium.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeStoredRun } from '../../bench/stored-run.js';
import { WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

const VIGNETTES = 120;

describe("Results' grid and Compare's changed verdicts", () => {
  const s = useUiSession({
    engine: (dir) => {
      const dataDir = join(dir, 'data');
      writeStoredRun(dataDir, { runId: 'rbase', vignettes: VIGNETTES, epochs: 1, models: [{ model: 'mock-strong', accuracy: 0.9 }, { model: 'mock-weak', accuracy: 0.6 }] });
      writeStoredRun(dataDir, { runId: 'rhead', vignettes: VIGNETTES, epochs: 1, models: [{ model: 'mock-strong', accuracy: 0.5 }, { model: 'mock-weak', accuracy: 0.6 }] });
      return {};
    },
  });
  const ids = () => s.page.locator('[data-testid=matrix-table] tbody th .mono').allTextContents();

  beforeAll(async () => {
    const scorers = { scorers: [{ name: 'exact', type: 'match' as const }] };
    s.ui.engine.scoring.start();
    for (const runId of ['rbase', 'rhead']) {
      await s.call('scoreRun', { runId, scorers });
      await s.ui.engine.scoring.finish(runId);
    }
    await s.openApp();
  }, 60_000);

  it('pages through every vignette of the grid, 50 at a time, as the service pages them', async () => {
    await s.page.goto(`${s.ui.origin}/#/results/rbase`);
    for (const cursor of [0, 50, 100]) {
      const page = await s.call('scoreMatrix', { runId: 'rbase', scorer: 'exact', sort: 'vignette', limit: 50, cursor });
      await expect.poll(ids, WAIT).toEqual(page.rows.map((r) => r.vignetteId));
      expect(await s.page.getByTestId('matrix-count').textContent()).toBe(`${cursor + 1}–${cursor + page.rows.length} of ${VIGNETTES} vignettes`);
      if (page.nextCursor === null) expect(await s.page.getByTestId('matrix-next').isDisabled()).toBe(true);
      else await s.page.getByTestId('matrix-next').click();
    }
    await s.page.getByTestId('matrix-prev').click();
    await expect.poll(() => s.page.getByTestId('matrix-count').textContent(), WAIT).toBe(`51–100 of ${VIGNETTES} vignettes`);
  });

  it('searches every vignette, from the first page, and says how many match', async () => {
    await s.page.goto(`${s.ui.origin}/#/results/rbase`);
    await expect.poll(async () => (await ids()).length, WAIT).toBe(50);
    await s.page.getByTestId('matrix-search').fill('v11');
    const found = await s.call('scoreMatrix', { runId: 'rbase', scorer: 'exact', sort: 'vignette', limit: 50, cursor: 0, search: 'v11' });
    expect(found.total).toBeGreaterThan(1);
    await expect.poll(ids, WAIT).toEqual(found.rows.map((r) => r.vignetteId));
    expect(await s.page.getByTestId('matrix-count').textContent()).toBe(`1–${found.rows.length} of ${found.total} vignettes matching “v11”`);
    await s.page.getByTestId('matrix-search').fill('no such vignette');
    await expect.poll(() => s.page.getByTestId('matrix-count').textContent(), WAIT).toBe('No vignette matches “no such vignette”');
  });

  it("lists each model's vignettes that went from pass to fail and back, and opens both runs' answers", async () => {
    await s.page.goto(`${s.ui.origin}/#/compare/rbase/rhead`);
    const flips = await s.call('flippedVignettes', { runA: 'rbase', runB: 'rhead', scorer: 'exact' });
    const strong = flips.models.find((m) => m.model === 'mock-strong')!;
    // The head's answers are right less often: vignettes went from pass to fail, none the other way (the draws are shared).
    expect(strong.passToFailCount).toBeGreaterThan(20);
    expect(strong.failToPassCount).toBe(0);
    const section = s.page.locator('[data-testid=compare-flips] section[data-model="mock-strong"]');
    await expect.poll(() => section.getByTestId('pass-to-fail').locator('button').allTextContents(), WAIT).toEqual(strong.passToFail);
    expect(await section.getByTestId('fail-to-pass').textContent()).toContain('none');
    expect(await section.locator('h3').textContent()).toContain(`${strong.passToFailCount} pass → fail, 0 fail → pass, of ${strong.compared} compared`);
    // The same model at the same accuracy in both runs: nothing changed.
    const weak = s.page.locator('[data-testid=compare-flips] section[data-model="mock-weak"]');
    expect(await weak.locator('h3').textContent()).toContain('0 pass → fail, 0 fail → pass');

    await section.getByTestId('pass-to-fail').locator('button').first().click();
    const both = s.page.getByTestId('flip-answers');
    await both.waitFor(WAIT);
    const id = strong.passToFail[0]!;
    const [a, b] = await Promise.all(['rbase', 'rhead'].map(async (runId) => (await s.call('responses', { runId, vignetteId: id, model: 'mock-strong', limit: 10 })).items[0]!.response));
    await expect.poll(() => both.textContent(), WAIT).toContain(a!);
    expect(await both.textContent()).toContain(b!);
    expect(s.problems).toEqual([]);
  });
});
