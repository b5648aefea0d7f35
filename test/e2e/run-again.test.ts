/**
 * Run again as a form, in real Chromium against a real engine: *Run again* opens New run filled
 * from the run (manifest, models, epochs, name, scorers, sampling, the cache choice, a staged
 * template and the reasoning settings) and creates
 * nothing until Create; a re-run that the prompt cache would answer wholly says so before Create,
 * and one click turns the cache off; created so, the unseeded mocks at temperature 1 answer
 * afresh, so the two runs differ.
 * Runs on: Node (tests), driving Chromium.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { writeTargetManifest } from '../helpers/temp.js';
import { WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

const SCORERS = { scorers: [{ name: 'exact', type: 'match' as const }] };

describe('Run again as a form', () => {
  const s = useUiSession({ context: { viewport: { width: 1280, height: 800 } } });
  beforeAll(async () => {
    s.ui.engine.scoring.start();
    await s.openApp();
  });

  it('opens New run filled from the run, warns that the cache would answer it all, and creates a run that differs', async () => {
    const service = s.ui.engine.service;
    const first = await service.createRun({
      manifestPath: writeTargetManifest(s.dir, 12),
      models: ['mock-strong', 'mock-weak'],
      epochs: 2,
      privacy: 'fallback',
      sampling: { temperature: 1, maxTokens: 200 },
      name: 'nightly',
      scorers: SCORERS,
    });
    await expect.poll(async () => (await service.getRun({ runId: first.id })).run.status, WAIT).toBe('done');
    await s.page.goto(`${s.ui.origin}/#/runs/${first.id}`);
    await s.page.getByTestId('retry-all').click();
    await s.page.waitForURL(new RegExp(`#/new/again/${first.id}$`), WAIT);

    await expect.poll(() => s.page.getByTestId('create-run').textContent(), WAIT).toBe('Create run · 48 calls');
    expect(await s.page.getByTestId('manifest-path').inputValue()).toBe(first.manifestPath);
    expect(await s.page.locator('.model-option.checked').evaluateAll((els) => els.map((e) => e.getAttribute('data-model')))).toEqual(['mock-strong', 'mock-weak']);
    expect(await s.page.getByTestId('epochs').inputValue()).toBe('2');
    expect(await s.page.getByLabel('Name', { exact: true }).inputValue()).toBe('nightly');
    expect(await s.page.getByTestId('temperature').inputValue()).toBe('1');
    expect(await s.page.getByTestId('max-tokens').inputValue()).toBe('200');
    expect(await s.page.getByTestId('seed').inputValue()).toBe('');
    expect(JSON.parse(await s.page.getByTestId('new-run-scoring-text').inputValue())).toEqual(SCORERS);
    expect(await s.page.getByTestId('use-cache').isChecked()).toBe(true);
    // Nothing is created before Create.
    expect(await service.listRuns()).toHaveLength(1);

    // Every answer would come from the cache: said before Create, naming the run that holds them.
    await s.page.getByTestId('whole-cache').waitFor(WAIT);
    expect(await s.page.getByTestId('whole-cache').textContent()).toContain('nightly');
    // A change that misses the cache (one more epoch than cached) takes the warning away; back, it returns.
    await s.page.getByTestId('epochs').fill('3');
    await expect.poll(() => s.page.getByTestId('whole-cache').count(), WAIT).toBe(0);
    await s.page.getByTestId('epochs').fill('2');
    await s.page.getByTestId('whole-cache').waitFor(WAIT);
    await s.page.getByTestId('whole-cache-off').click();
    expect(await s.page.getByTestId('use-cache').isChecked()).toBe(false);
    expect(await s.page.getByTestId('whole-cache').count()).toBe(0);

    await s.page.getByTestId('create-run').click();
    await s.page.waitForURL((url) => /#\/runs\/r[0-9a-z]+$/.test(url.hash) && !url.hash.endsWith(first.id), WAIT);
    const second = decodeURIComponent(s.page.url().split('#/runs/')[1]!);
    await expect.poll(async () => (await service.getRun({ runId: second })).run.status, WAIT).toBe('done');
    const detail = await service.getRun({ runId: second });
    expect(detail.run).toMatchObject({ name: 'nightly', epochs: 2, models: ['mock-strong', 'mock-weak'] });
    expect(detail.run.options).toMatchObject({ privacy: 'fallback', skipPromptCache: true, sampling: { temperature: 1, maxTokens: 200 } });
    expect((await service.scoringStatus({ runId: second })).scorers.map((s) => s.name)).toEqual(['exact']);
    // Fresh draws: no answer came from the cache, and some answers differ from the first run's.
    expect(detail.run.cachedCalls).toBe(0);
    const answers = async (runId: string) => (await service.responses({ runId, limit: 100 })).items.map((r) => `${r.model} ${r.vignetteId} ${r.epoch} ${r.response}`).sort();
    const [a, b] = [await answers(first.id), await answers(second)];
    expect(a.filter((line, i) => line !== b[i]).length).toBeGreaterThan(0);
  });

  it("fills a run's template and reasoning settings in, and creates the run with them", async () => {
    const service = s.ui.engine.service;
    const manifestPath = writeTargetManifest(s.dir, 3, 'staged.jsonl');
    const template = 'name: plan-then-answer\nstages:\n  - name: plan\n    prompt: "Plan: {{vignette.prompt}}"\n  - name: answer\n    prompt: "With {{stages.plan}}, answer: {{vignette.prompt}}"\n';
    const staged = await service.createRun({ manifestPath, models: ['mock-scripted'], epochs: 1, template, sampling: { reasoningEffort: 'low', thinkingBudget: 2048 } });
    const builtin = await service.createRun({ manifestPath, models: ['mock-scripted'], epochs: 1, template: 'repo_audit' });
    await s.page.goto(`${s.ui.origin}/#/new/again/${builtin.id}`);
    await expect.poll(() => s.page.getByTestId('template').inputValue(), WAIT).toBe('repo_audit');
    expect(await s.page.getByTestId('reasoning-effort').inputValue()).toBe('');

    await s.page.goto(`${s.ui.origin}/#/new/again/${staged.id}`);
    await expect.poll(() => s.page.getByTestId('template').inputValue(), WAIT).toBe('file');
    expect(await s.page.locator('[data-field=templateFile] .field-hint').textContent()).toMatch(/^the run's template: \d+ characters$/);
    expect(await s.page.getByTestId('reasoning-effort').inputValue()).toBe('low');
    expect(await s.page.getByTestId('thinking-budget').inputValue()).toBe('2048');
    await expect.poll(() => s.page.getByTestId('create-run').textContent(), WAIT).toBe('Create run · 3 calls');
    await s.page.getByTestId('create-run').click();
    await s.page.waitForURL((url) => /#\/runs\/r[0-9a-z]+$/.test(url.hash) && !url.hash.endsWith(staged.id) && !url.hash.endsWith(builtin.id), WAIT);
    const id = decodeURIComponent(s.page.url().split('#/runs/')[1]!);
    const made = (await service.getRun({ runId: id })).run;
    expect(made.options.template).toEqual(staged.options.template);
    expect(made.options.sampling).toMatchObject({ reasoningEffort: 'low', thinkingBudget: 2048 });
  });

  it('saw no console error, exception or failed request', () => {
    expect(s.problems).toEqual([]);
  });
});
