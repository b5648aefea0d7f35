/**
 * A staged template over HTTP: `POST /runs` takes the template's text (or a built-in's name) in
 * `template`, refuses a bad one with 400 naming its line, and the run's responses carry the
 * last stage's answer.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeManifest } from '../helpers/temp.js';
import { startApi, type ApiHarness } from './harness.js';

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi();
});
afterAll(async () => {
  await api.close();
});

const TEMPLATE = `name: two-step
stages:
  - name: draft
    prompt: "Draft: {{vignette.prompt}}"
  - name: final
    prompt: "Improve: {{stages.draft}}"
`;

it('POST /runs with a template runs it, and refuses a bad one with 400 naming its line', async () => {
  const manifest = writeManifest(api.dir, 3);
  const bad = await api.call('POST', '/runs', { body: { manifest, models: ['fast'], epochs: 1, template: TEMPLATE.replace('stages.draft', 'stages.final') } });
  expect(bad.status).toBe(400);
  expect(bad.json.error.message).toBe('template:6: stages.1.prompt: {{stages.final}}: stage "final" refers to itself (a cycle)');

  const created = await api.call('POST', '/runs', { body: { manifest, models: ['fast'], epochs: 1, template: TEMPLATE } });
  expect(created.status, created.text).toBe(201);
  const run = await api.engine.runToEnd(created.json.id as string);
  expect(run.status).toBe('done');
  const page = await api.call('GET', `/runs/${run.id}/responses`);
  expect(page.status).toBe(200);
  expect(page.json.items).toHaveLength(3);

  const builtin = await api.call('POST', '/runs', { body: { manifest, models: ['fast'], epochs: 1, template: 'panel_debate' } });
  expect(builtin.status, builtin.text).toBe(201);
});
