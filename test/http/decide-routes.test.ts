/**
 * The deciding routes over real HTTP answer what the service answers: `POST /plan` from guesses,
 * `POST /gate` of a head run against a base run, `GET /runs/:id/decision` of a stored run, each
 * equal to the contract's own call; and each refuses bad input naming the field (400), or an
 * unknown run (404), changing nothing.
 * Runs on: Node (tests), a real server on 127.0.0.1 port 0 over a real SQLite file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTargetManifest } from '../helpers/temp.js';
import { startApi, type ApiHarness } from './harness.js';

let api: ApiHarness;
const runs: string[] = [];
beforeAll(async () => {
  api = await startApi({ startScheduler: false });
  const e = api.engine;
  e.scoring.start();
  const manifestPath = writeTargetManifest(api.dir, 40);
  for (let i = 0; i < 2; i++) {
    const run = await e.service.createRun({ manifestPath, models: ['mock-strong', 'mock-weak'], epochs: 1, scorers: { scorers: [{ name: 'exact', type: 'match' }] } });
    await e.scheduler.runToCompletion(run.id);
    await e.scoring.finish(run.id);
    runs.push(run.id);
  }
}, 60_000);
afterAll(async () => {
  await api?.close();
});

describe('POST /plan', () => {
  it('plans from guesses as the service does', async () => {
    const input = { models: ['mock-strong', 'mock-weak'], accuracy: [0.85, 0.7], delta: 0.1, flipRate: 0.1 };
    const res = await api.call('POST', '/plan', { body: input });
    expect(res.status).toBe(200);
    expect(res.json).toEqual(JSON.parse(JSON.stringify(await api.engine.service.plan(input))));
    expect(res.json.designs.length).toBeGreaterThan(0);
  });

  it('plans from a pilot run', async () => {
    const input = { fromRun: runs[0]!, delta: 0.15 };
    const res = await api.call('POST', '/plan', { body: input });
    expect(res.status).toBe(200);
    expect(res.json).toEqual(JSON.parse(JSON.stringify(await api.engine.service.plan(input))));
  });

  it('refuses a delta out of range naming the field, and an unknown pilot with 404', async () => {
    const bad = await api.call('POST', '/plan', { body: { models: ['mock-strong', 'mock-weak'], accuracy: [0.8, 0.7], delta: 2 } });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('delta');
    const missing = await api.call('POST', '/plan', { body: { fromRun: 'r-nope', delta: 0.1 } });
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('r-nope');
  });
});

describe('POST /gate', () => {
  it('gates a head against its base as the service does: the same sweep twice passes', async () => {
    const input = { base: runs[0]!, head: runs[1]! };
    const res = await api.call('POST', '/gate', { body: input });
    expect(res.status).toBe(200);
    expect(res.json).toEqual(JSON.parse(JSON.stringify(await api.engine.service.gate(input))));
    expect(res.json.decision).toBe('pass');
    expect(res.json.lines.map((l: { model: string; variant: string | null }) => [l.model, l.variant])).toEqual([
      ['mock-strong', null],
      ['mock-weak', null],
    ]);
  });

  it('refuses a margin out of range naming the field, and an unknown run with 404', async () => {
    const bad = await api.call('POST', '/gate', { body: { base: runs[0]!, head: runs[1]!, margin: -1 } });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('margin');
    const missing = await api.call('POST', '/gate', { body: { base: runs[0]!, head: 'r-nope' } });
    expect(missing.status).toBe(404);
  });
});

describe('GET /runs/:id/decision', () => {
  it("answers a run's anytime-valid decision as the service does", async () => {
    const res = await api.call('GET', `/runs/${runs[0]!}/decision?scorer=exact&batch=5`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual(JSON.parse(JSON.stringify(await api.engine.service.decide({ runId: runs[0]!, scorer: 'exact', batch: 5 }))));
    expect(res.json.pairs).toHaveLength(1);
  });

  it('refuses a batch that is not a whole number naming the field, and an unknown run with 404', async () => {
    const bad = await api.call('GET', `/runs/${runs[0]!}/decision?batch=many`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('batch');
    const missing = await api.call('GET', '/runs/r-nope/decision');
    expect(missing.status).toBe(404);
  });
});
