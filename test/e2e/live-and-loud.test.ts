/**
 * Nothing stale, nothing silent, in real Chromium against a real engine: a run cancelled and
 * retried from its own view shows it running again at once (badge, banner and Retry button gone)
 * and its Runs row follows, without a reload; a judge without its API key is refused at the New run
 * Scoring field with the key it lacks; a scorer that fails later says why on the Results page.
 * Runs on: Node (tests), driving Chromium.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { writeManifest, writeTargetManifest } from '../helpers/temp.js';
import { shotPath, WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

describe('live and loud', () => {
  // No API key of any hosted provider: their models (as judges too) have no host to call.
  const s = useUiSession({ engine: { router: { env: {} } }, context: { viewport: { width: 1280, height: 860 } } });
  beforeAll(async () => {
    s.ui.engine.scoring.start();
    // The token, from the address the server printed; the session keeps it.
    await s.page.goto(s.ui.appUrl);
    await s.page.getByTestId('try-example').waitFor(WAIT);
  });

  it('follows a run through Cancel and Retry, clicked as a user would, without a reload', async () => {
    const service = s.ui.engine.service;
    const run = await service.createRun({ manifestPath: writeManifest(s.dir, 30, 'slow.jsonl'), models: ['mock-slow'], epochs: 3, concurrency: 1 });
    await s.page.goto(`${s.ui.origin}/#/runs/${run.id}`);
    const badge = s.page.locator('.view-header [data-testid=status]');
    await expect.poll(() => badge.textContent(), WAIT).toBe('running');
    await expect.poll(async () => (await service.getRun({ runId: run.id })).run.calls, WAIT).toBeGreaterThan(0);
    await s.page.getByTestId('cancel-run').click();
    await s.page.getByTestId('confirm-cancel').click();
    await expect.poll(() => badge.textContent(), WAIT).toBe('cancelled');
    await s.page.getByTestId('retry-failed').waitFor(WAIT);

    await s.page.getByTestId('retry-failed').click();
    // The view leaves "cancelled" while the run runs again, not when it ends.
    await expect.poll(() => badge.textContent(), WAIT).not.toBe('cancelled');
    expect(['queued', 'running']).toContain(await badge.textContent());
    expect((await service.getRun({ runId: run.id })).run.status).not.toBe('done');
    expect(await s.page.getByTestId('retry-failed').count()).toBe(0);
    expect(await s.page.getByTestId('run-error').count()).toBe(0);
    await s.page.getByTestId('cancel-run').waitFor(WAIT);
    // The job grid counts no cancelled job once its jobs are fetched again.
    await expect.poll(() => s.page.locator('[data-testid=job-legend] [data-status=cancelled] strong').textContent(), WAIT).toBe('0');
    await expect.poll(() => badge.textContent(), WAIT).toBe('done');

    // Runs follows the same way: its row shows the run as it is.
    await s.page.goto(`${s.ui.origin}/#/runs`);
    await expect.poll(() => s.page.locator(`[data-testid=run-row][data-run-id="${run.id}"] [data-testid=status]`).textContent(), WAIT).toBe('done');
  });

  it('refuses a judge without its API key at the Scoring field, naming the key', async () => {
    await s.page.goto(`${s.ui.origin}/#/new/example`);
    await expect.poll(() => s.page.getByTestId('create-run').textContent(), WAIT).toBe('Create run · 144 calls');
    await s.page.getByTestId('privacy').selectOption('off');
    const scoring = JSON.stringify({ scorers: [{ name: 'graded', type: 'judge', judges: ['gpt-4o-mini'], rubric: 'Is it right?' }] });
    await s.page.getByTestId('new-run-scoring-text').fill(scoring);
    await s.page.getByTestId('create-run').click();
    const error = s.page.locator('#field-scoring-note');
    await expect.poll(() => error.textContent(), WAIT).toContain('judge "gpt-4o-mini" has no host it can call: OPENAI_API_KEY is not set');
    expect(s.page.url()).toContain('#/new');
    expect(await s.ui.engine.service.listRuns()).toHaveLength(1);
    await s.page.screenshot({ path: shotPath('live-judge-refused') });
  });

  it("says on Results why a scorer could not score some records", async () => {
    const code = `function score(i) { if (i.vignetteId === 'q3') throw new Error('no verdict for q3'); return 1; }`;
    const run = await s.ui.engine.service.createRun({
      manifestPath: writeTargetManifest(s.dir, 6),
      models: ['mock-fast'],
      epochs: 1,
      scorers: { scorers: [{ name: 'picky', type: 'code', code }] },
    });
    await s.page.goto(`${s.ui.origin}/#/results/${run.id}`);
    const alert = s.page.locator('[data-testid=scorer-failure][data-scorer=picky]');
    await expect.poll(() => alert.textContent(), WAIT).toContain('could not score 1 record, left out of every figure: Error: no verdict for q3');
    expect(await alert.getAttribute('role')).toBe('alert');
  });

  it('saw no console error, exception or failed request but the refusal it provoked', () => {
    // The refused createRun answers 400, which Chromium logs.
    expect(s.problems.filter((p) => !p.includes('status of 400 (Bad Request)'))).toEqual([]);
  });
});
