/**
 * Runs people manage, over HTTP: a name given at creation, then renamed, noted, tagged and archived
 * (`PATCH /runs/:id`); lists hide archived runs unless asked and find runs by words; a finished
 * run deleted (`DELETE /runs/:id`) leaves no row, score or folder behind, and a running one is
 * refused (409) until it is cancelled.
 * Runs on: Node (tests).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { writeTargetManifest } from '../helpers/temp.js';
import { startApi, waitForRun, type ApiHarness } from './harness.js';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

function rowsOf(a: ApiHarness, runId: string): Record<string, number> {
  const db = a.engine.store.db;
  const count = (sql: string) => (db.prepare(sql).get(runId) as { n: number }).n;
  return {
    runs: count('SELECT COUNT(*) AS n FROM runs WHERE id = ?'),
    jobs: count('SELECT COUNT(*) AS n FROM jobs WHERE run_id = ?'),
    vignettes: count('SELECT COUNT(*) AS n FROM vignettes WHERE run_id = ?'),
    responses: count('SELECT COUNT(*) AS n FROM responses s JOIN jobs j ON j.id = s.job_id WHERE j.run_id = ?'),
    runScorers: count('SELECT COUNT(*) AS n FROM run_scorers WHERE run_id = ?'),
  };
}

it('names, describes, archives, finds and deletes runs; a running run is refused until cancelled', async () => {
  const a = (api = await startApi());
  a.engine.scoring.start();
  const manifest = writeTargetManifest(a.dir, 8);
  const scorers = { scorers: [{ name: 'exact', type: 'match' }] };
  const created = await a.call('POST', '/runs', { body: { manifest, models: ['fast'], epochs: 2, name: 'Baseline sweep', scorers } });
  expect(created.status).toBe(201);
  expect(created.json).toMatchObject({ name: 'Baseline sweep', notes: null, tags: [], archivedAt: null, restarts: 0 });
  const id = created.json.id as string;
  await waitForRun(a, id);
  await a.engine.scoring.finish(id);

  const patched = await a.call('PATCH', `/runs/${id}`, { body: { name: 'Baseline, temperature 0', notes: 'before the prompt change', tags: ['baseline', 'nov'] } });
  expect(patched.status).toBe(200);
  expect(patched.json).toMatchObject({ name: 'Baseline, temperature 0', notes: 'before the prompt change', tags: ['baseline', 'nov'] });
  const badTag = await a.call('PATCH', `/runs/${id}`, { body: { tags: ['a,b'] } });
  expect(badTag.status).toBe(400);
  expect(badTag.json.error.where).toBe('tags.0');

  const other = await a.call('POST', '/runs', { body: { manifest, models: ['fast'], epochs: 1 } });
  await waitForRun(a, other.json.id);
  const ids = async (query: string) => ((await a.call('GET', `/runs${query}`)).json.runs as { id: string }[]).map((r) => r.id);
  expect(await ids('?search=PROMPT%20baseline')).toEqual([id]);
  expect(await ids('?search=100%25')).toEqual([]);
  expect(await ids('')).toEqual([other.json.id, id]);

  await a.call('PATCH', `/runs/${id}`, { body: { archived: true } });
  expect(await ids('')).toEqual([other.json.id]);
  expect(await ids('?archived=only')).toEqual([id]);
  expect(await ids('?archived=include')).toEqual([other.json.id, id]);
  expect((await a.call('GET', `/runs/${id}`)).json.run.archivedAt).toEqual(expect.any(Number));

  const folder = join(a.dataDir, 'runs', id);
  expect(existsSync(folder)).toBe(true);
  expect(rowsOf(a, id)).toEqual({ runs: 1, jobs: 2, vignettes: 8, responses: 16, runScorers: 1 });
  const scoresBefore = (a.engine.store.db.prepare('SELECT COUNT(*) AS n FROM scores').get() as { n: number }).n;
  expect(scoresBefore).toBeGreaterThanOrEqual(16);
  const deleted = await a.call('DELETE', `/runs/${id}`);
  expect(deleted.status).toBe(200);
  expect(deleted.json.id).toBe(id);
  expect(rowsOf(a, id)).toEqual({ runs: 0, jobs: 0, vignettes: 0, responses: 0, runScorers: 0 });
  // The other run's records and scores are untouched; this run's scores are gone.
  expect(rowsOf(a, other.json.id).responses).toBe(8);
  expect((a.engine.store.db.prepare('SELECT COUNT(*) AS n FROM scores').get() as { n: number }).n).toBe(scoresBefore - 16);
  expect(existsSync(folder)).toBe(false);
  expect((await a.call('GET', `/runs/${id}`)).status).toBe(404);
  expect((await a.call('DELETE', `/runs/${id}`)).status).toBe(404);
});

it('refuses to delete a queued or running run (409), and deletes it once cancelled', async () => {
  const a = (api = await startApi({ startScheduler: false }));
  const created = await a.call('POST', '/runs', { body: { manifest: writeTargetManifest(a.dir, 4), models: ['fast'], epochs: 1 } });
  const id = created.json.id as string;
  const refused = await a.call('DELETE', `/runs/${id}`);
  expect(refused.status).toBe(409);
  expect(refused.json.error.message).toBe(`run ${id} is queued: cancel it first, then delete it (its owner is never cut off mid-write)`);
  expect(rowsOf(a, id).runs).toBe(1);
  await a.call('POST', `/runs/${id}/cancel`);
  expect((await a.call('DELETE', `/runs/${id}`)).status).toBe(200);
  expect(rowsOf(a, id).runs).toBe(0);
});
