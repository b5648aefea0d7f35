/**
 * The stages panel of the side-by-side view in real Chromium: a staged-template run (map, a
 * fan-out review of three items, synthesize) on a scripted model, opened from the Results matrix;
 * under the answer, one collapsed line per call with its stage, item, tokens and time, each opening
 * to the prompt it was posed with and its answer, as the engine's scoreDetail stores them.
 * Runs on: Node (tests), driving Chromium.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { formatInt } from '../../renderer/src/format.js';
import { writeManifest } from '../helpers/temp.js';
import { CHAIN, scriptedCatalog } from '../templates/scripted-chain.js';
import { shotPath, WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

describe('the stages panel of the side-by-side view', () => {
  const s = useUiSession({ engine: (dir) => ({ catalogPaths: [scriptedCatalog(dir)] }), startScheduler: false });
  let runId: string;

  beforeAll(async () => {
    const run = await s.ui.engine.service.createRun({
      manifestPath: writeManifest(s.dir, 2),
      models: ['scripted'],
      epochs: 1,
      template: CHAIN,
      scorers: { scorers: [{ name: 'summarized', type: 'regex', pattern: '^summary of' }] },
    });
    runId = run.id;
    await s.page.goto(s.ui.appUrl);
  });

  it('shows each stage call with its prompt, answer, tokens and time', async () => {
    // Run and scored to the end in this process: the view then reads what is stored.
    expect((await s.ui.engine.runToEnd(runId)).status).toBe('done');
    expect((await s.ui.engine.service.scoringStatus({ runId })).scorers.map((x) => [x.done, x.pending, x.failed])).toEqual([[2, 0, 0]]);
    await s.page.goto(`${s.ui.origin}/#/results/${runId}`);
    const cell = s.page.locator('[data-testid=matrix-table] tr[data-vignette="v1"] button[data-model=scripted]');
    await cell.waitFor({ timeout: WAIT.timeout });
    await cell.click();
    const dialog = s.page.getByTestId('score-detail');
    await dialog.waitFor();

    const detail = await s.ui.engine.service.scoreDetail({ runId, vignetteId: 'v1' });
    const stages = detail.responses[0]!.stages!;
    expect(stages.map((c) => c.stage)).toEqual(['map', 'review', 'review', 'review', 'synthesize']);
    const panel = dialog.getByTestId('stage-calls');
    await panel.waitFor();
    expect(await panel.locator('summary').first().textContent()).toBe('5 stage calls behind this answer');
    // Collapsed by default: the record's own answer is what the cell shows.
    expect(await panel.getAttribute('open')).toBeNull();
    await panel.locator('summary').first().click();

    const calls = panel.locator('li');
    expect(await calls.count()).toBe(5);
    const labels = ['map', 'review · item 1', 'review · item 2', 'review · item 3', 'synthesize'];
    for (const [i, c] of stages.entries()) {
      const call = calls.nth(i);
      expect(await call.getAttribute('data-stage')).toBe(c.stage);
      expect(await call.locator('.score-name').textContent()).toBe(labels[i]);
      expect(await call.locator('summary .muted').textContent()).toBe(
        `${formatInt(c.inputTokens)} in · ${formatInt(c.outputTokens)} out · ${formatInt(Math.round(c.latencyMs))} ms`,
      );
      await call.locator('summary').click();
      expect(await call.locator('[data-part=prompt]').textContent()).toBe(c.prompt);
      expect(await call.locator('[data-part=answer]').textContent()).toBe(c.response);
    }
    expect(await calls.nth(1).locator('[data-part=prompt]').textContent()).toBe('REVIEW alpha of Question number 1: what is 1 + 1?');
    expect(await calls.nth(4).locator('[data-part=answer]').textContent()).toBe(detail.responses[0]!.response);
    expect(stages.every((c) => c.inputTokens > 0 && c.outputTokens > 0)).toBe(true);
    await s.page.screenshot({ path: shotPath('side-by-side-stages') });
    expect(s.problems).toEqual([]);
  });
});
