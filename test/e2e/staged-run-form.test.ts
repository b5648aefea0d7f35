/**
 * New run's template and reasoning fields in real Chromium, offline on `mock-scripted`: a staged
 * run created from the form (a built-in template, a reasoning effort) runs to the end with every
 * stage kept; a template file with a bad line is refused by the engine at createRun, its line shown
 * beside the Template field, and no run is made.
 * Runs on: Node (tests), driving Chromium.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

describe('a staged run from the New run form', () => {
  const s = useUiSession();
  beforeAll(async () => {
    await s.page.goto(s.ui.appUrl);
  });

  const onlyScripted = async () => {
    await s.page.goto(`${s.ui.origin}/#/new/example`);
    await expect.poll(() => s.page.getByTestId('create-run').textContent(), WAIT).toBe('Create run · 144 calls');
    await s.page.locator('[data-model=mock-fast] input').uncheck();
    await s.page.locator('[data-model=mock-slow] input').uncheck();
    await s.page.locator('[data-model=mock-scripted] input').check();
    await s.page.getByTestId('epochs').fill('1');
  };

  it('creates a repo_audit run with a reasoning effort, and it runs to the end with its stages', async () => {
    await onlyScripted();
    await s.page.getByLabel('Template', { exact: true }).selectOption('repo_audit');
    await s.page.getByLabel('Reasoning effort', { exact: true }).selectOption('low');
    await s.page.getByTestId('create-run').click();
    await s.page.waitForURL(/#\/runs\/r[0-9a-z]+$/);
    const runId = decodeURIComponent(s.page.url().split('#/runs/')[1]!);
    await expect.poll(() => s.page.locator('.view-header [data-testid=status]').textContent(), WAIT).toBe('done');

    const run = s.ui.engine.store.queries.getRun(runId)!;
    expect(run.models).toEqual(['mock-scripted']);
    expect(run.options.template?.name).toBe('repo_audit');
    expect(run.options.sampling.reasoningEffort).toBe('low');
    // Every record carries its stages: repo_audit maps, reviews each of three items, then synthesizes.
    const perRecord = s.ui.engine.store.db
      .prepare(`SELECT COUNT(*) AS n FROM stage_answers s JOIN jobs j ON j.id = s.job_id WHERE j.run_id = ? GROUP BY s.vignette_idx`)
      .all(runId) as { n: number }[];
    expect(perRecord).toHaveLength(run.vignetteCount);
    expect(perRecord.every((r) => r.n >= 5)).toBe(true);
    expect(s.problems).toEqual([]);
  });

  it('refuses a template file with a bad line beside the Template field, creating nothing', async () => {
    const before = (await s.ui.engine.service.listRuns({})).length;
    const file = join(s.dir, 'bad.yaml');
    writeFileSync(file, 'name: bad\nstages:\n  - name: only\n    prompt: "{{stages.later}}"\n');
    await onlyScripted();
    await s.page.getByLabel('Template', { exact: true }).selectOption('file');
    await s.page.getByTestId('template-file').setInputFiles(file);
    await expect.poll(() => s.page.locator('[data-field=templateFile] .field-hint').textContent(), WAIT).toMatch(/^bad\.yaml: \d+ characters$/);
    await s.page.getByTestId('thinking-budget').fill('2048');
    await s.page.getByTestId('create-run').click();
    await expect.poll(() => s.page.getByTestId('error-template').textContent(), WAIT).toMatch(/^template:4: stages\.0\.prompt: \{\{stages\.later\}\}: unknown stage "later"/);
    expect(s.page.url()).toMatch(/#\/new/);
    expect((await s.ui.engine.service.listRuns({})).length).toBe(before);
  });
});
