/**
 * The scoring guide's HTTP example is right: the body of its `curl` to `POST /runs/:id/score`,
 * read from docs/guide/scoring.md itself, is sent to a real server with a stored run and answered
 * `202` with the scoring status it shows, and the scorers score the run; the bare list the guide
 * once showed is refused naming `scorers`, attaching nothing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { initTelemetry } from '../../core/telemetry.js';
import { startApi, waitForRun, type ApiHarness } from './harness.js';

initTelemetry({ defaultLevel: 'silent' });

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** The guide's `POST /runs/:id/score` example: its body and the status line of its answer. */
function guideExample(): { body: { scorers: { scorers: { name: string }[] } }; answer: string } {
  const guide = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'guide', 'scoring.md'), 'utf8');
  const section = guide.slice(guide.indexOf('## Over HTTP'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  expect(block).toMatch(/\$U\/runs\/[^/\s]+\/score\n/);
  const body = /-d '([^']+)'/.exec(block)?.[1] ?? '';
  const answer = /^# (\d{3}) /m.exec(block)?.[1] ?? '';
  return { body: JSON.parse(body) as { scorers: { scorers: { name: string }[] } }, answer };
}

it("the guide's example attaches its scorers and scores the run; a bare list is refused naming scorers", async () => {
  const example = guideExample();
  expect(example.answer).toBe('202');

  api = await startApi();
  const manifest = join(api.dir, 'guide.jsonl');
  writeFileSync(manifest, Array.from({ length: 6 }, (_, i) => JSON.stringify({ id: `q${i}`, prompt: `Pick one. ANSWER: ${'ABCDE'[i % 5]}`, target: 'A' })).join('\n') + '\n');
  const created = await api.call('POST', '/runs', { body: { manifest, models: ['mock-strong'], epochs: 1 } });
  expect(created.status).toBe(201);
  const runId = created.json.id as string;
  await waitForRun(api, runId);

  const bare = await api.call('POST', `/runs/${runId}/score`, { body: { scorers: example.body.scorers.scorers } });
  expect(bare.status).toBe(400);
  expect(bare.json).toMatchObject({ ok: false, error: { code: 'invalid_input', where: expect.stringMatching(/^scorers/) } });
  expect((await api.engine.service.scoringStatus({ runId })).scorers).toEqual([]);

  const attached = await api.call('POST', `/runs/${runId}/score`, { body: example.body });
  expect(attached.status).toBe(202);
  const names = example.body.scorers.scorers.map((s) => s.name);
  expect(attached.json).toMatchObject({ runId, scorers: names.map((name) => ({ name, version: expect.any(String), layer: 'rule' })) });
  await api.engine.scoring.finish(runId);
  const status = await api.engine.service.scoringStatus({ runId });
  expect(status.scorers.map((s) => [s.name, s.done, s.pending])).toEqual(names.map((name) => [name, 6, 0]));
});
