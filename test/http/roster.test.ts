/**
 * The router's face over HTTP: `GET /roster` lists every logical model with hosts, privacy class,
 * health, window, price and frontier flag; `GET /health` says `frontier_ok` without a token, and
 * turns false once a probe (`POST /probe`) finds one of the two frontier models' key refused;
 * `GET /metrics?profile=` filters and totals by profile; bad input is refused naming the field.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { startApi, type ApiHarness } from './harness.js';

let api: ApiHarness | undefined;
let tmp: ReturnType<typeof tempDir> | undefined;
afterEach(async () => {
  await api?.close();
  tmp?.cleanup();
  api = undefined;
  tmp = undefined;
});

function frontierCatalog(): string {
  tmp = tempDir();
  const path = join(tmp.dir, 'frontier.json');
  const mock = (model: string, options: Record<string, unknown> = {}) => ({ provider: model, model, contextWindow: 50000, options });
  writeFileSync(
    path,
    JSON.stringify({
      providers: {
        north: { kind: 'mock', trainsOnData: false },
        south: { kind: 'mock', trainsOnData: false },
        leaky: { kind: 'mock', trainsOnData: true },
      },
      models: {
        north: { frontier: true, frontierAsOf: '2026-11', hosts: [mock('north')] },
        south: { frontier: true, frontierAsOf: '2026-11', hosts: [mock('south', { errorRate: 1, errorKind: 'auth' })] },
        leaky: { frontier: true, frontierAsOf: '2026-11', hosts: [mock('leaky')] },
      },
    }),
  );
  return path;
}

describe('roster, frontier_ok and probes over HTTP', () => {
  it('serves the roster, and frontier_ok turns false when a probe finds a refused key', async () => {
    api = await startApi({ startScheduler: false, engine: { catalogPaths: [frontierCatalog()] } });
    const health = await api.call('GET', '/health', { headers: { authorization: '' } });
    expect(health.status).toBe(200);
    expect(health.json.frontier_ok).toBe(true);
    expect(health.json.posture.frontierReady).toEqual(['north', 'south']);

    const roster = await api.call('GET', '/roster');
    expect(roster.status).toBe(200);
    const north = roster.json.models.find((m: { model: string }) => m.model === 'north');
    expect(north).toMatchObject({ frontier: true, frontierAsOf: '2026-11', contextWindow: 50000, privacySafe: true, inputPerMTok: 3, outputPerMTok: 15 });
    expect(north.hosts[0]).toMatchObject({ id: 'north/north', kind: 'mock', state: 'ready', privacySafe: true, inputPerMTok: null, lastProbe: null });
    // The hosted defaults are listed too, each waiting for its key.
    const gpt = roster.json.models.find((m: { model: string }) => m.model === 'gpt-5.4');
    expect(gpt).toMatchObject({ frontier: true, routable: false });
    expect(gpt.hosts[0].state).toBe('no_key');
    expect(await api.call('GET', '/roster', { headers: { authorization: '' } })).toMatchObject({ status: 401 });

    const probe = await api.call('POST', '/probe', { body: { models: ['north', 'south', 'leaky'] } });
    expect(probe.status).toBe(200);
    expect(probe.json).toMatchObject({ ok: 2, failed: 1 });
    expect(probe.json.results.find((r: { host: string }) => r.host === 'south/south')).toMatchObject({ status: 'auth', state: 'blacklisted' });

    const after = await api.call('GET', '/health', { headers: { authorization: '' } });
    expect(after.json.frontier_ok).toBe(false);
    expect(after.json.posture.frontierReady).toEqual(['north']);

    const bad = await api.call('POST', '/probe', { body: { models: [] } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.where).toBe('models');
    const unknown = await api.call('POST', '/probe', { body: { models: ['nope'] } });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.message).toContain('cannot probe "nope"');
  });

  it('filters /metrics by profile and totals per profile', async () => {
    api = await startApi({ startScheduler: false, engine: { catalogPaths: [frontierCatalog()], router: { profile: 'lab' } } });
    expect((await api.call('POST', '/probe', { body: { models: ['north'] } })).status).toBe(200);
    const all = await api.call('GET', '/metrics');
    expect(all.json.profiles).toEqual([expect.objectContaining({ profile: 'lab', calls: 1 })]);
    const lab = await api.call('GET', '/metrics?profile=lab');
    expect(lab.json).toMatchObject({ profile: 'lab', providers: [expect.objectContaining({ provider: 'north', calls: 1 })] });
    const other = await api.call('GET', '/metrics?profile=home');
    expect(other.json).toMatchObject({ profile: 'home', profiles: [], providers: [], recent: [] });
    const empty = await api.call('GET', `/metrics?profile=${'x'.repeat(300)}`);
    expect(empty.status).toBe(400);
    expect(empty.json.error.where).toBe('profile');
  });
});
