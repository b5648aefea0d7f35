/**
 * `panoptes rm`: a finished run named with `--name` is deleted with its folder; a queued run is
 * refused, named, and kept (exit 1); `--keep-days` prunes archived runs past the retention only.
 * Runs on: Node (tests), spawning the built CLI.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openEngine } from '../../core/service/engine.js';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeManifest } from '../helpers/temp.js';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

it('deletes finished runs, refuses a queued one, and prunes archived runs past --keep-days', async () => {
  const data = join(tmp.dir, 'data');
  const manifest = writeManifest(tmp.dir, 4);
  const made = await runCli(['run', '--manifest', manifest, '--models', 'mock-fast', '--epochs', '1', '--name', 'first try', '--json', '--data-dir', data]);
  expect(made.code).toBe(0);
  const done = (JSON.parse(made.stdout) as { run_id: string }).run_id;
  const listed = await runCli(['runs', '--data-dir', data]);
  expect(listed.stdout).toMatch(new RegExp(`${done}\\s+first try\\s+done`));

  const engine = openEngine({ dataDir: data });
  const queued = await engine.service.createRun({ manifestPath: manifest, models: ['mock-fast'], epochs: 1 });
  const old = await engine.service.createRun({ manifestPath: manifest, models: ['mock-fast'], epochs: 1 });
  await engine.service.cancelRun({ runId: old.id });
  await engine.service.describeRun({ runId: old.id, archived: true });
  // Archived ten days ago, as far as the retention can tell.
  engine.store.db.prepare('UPDATE runs SET archived_at = ? WHERE id = ?').run(Date.now() - 10 * 86_400_000, old.id);
  await engine.close();

  const rm = await runCli(['rm', done, queued.id, '--data-dir', data]);
  expect(rm.code).toBe(1);
  expect(rm.stdout).toContain(`deleted run ${done} (first try): 4 records and their scores`);
  expect(rm.stderr).toContain(`not deleted: run ${queued.id} is queued: cancel it first, then delete it`);
  expect(existsSync(join(data, 'runs', done))).toBe(false);

  const keep30 = await runCli(['rm', '--keep-days', '30', '--data-dir', data]);
  expect(keep30.code).toBe(0);
  expect(keep30.stdout).toBe('no run archived more than 30 days ago\n');
  const keep7 = await runCli(['rm', '--keep-days', '7', '--data-dir', data]);
  expect(keep7.code).toBe(0);
  expect(keep7.stdout).toContain(`deleted run ${old.id}`);

  const left = JSON.parse((await runCli(['runs', '--json', '--data-dir', data])).stdout) as { id: string }[];
  expect(left.map((r) => r.id)).toEqual([queued.id]);
}, 120_000);
