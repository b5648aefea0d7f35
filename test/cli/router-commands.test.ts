/**
 * The router's commands through the real `panoptes` binary: `probe` reports each host and exits 1
 * when one fails; `run --probe` refuses a sweep whose model the probe left without a host, and
 * runs one whose hosts answer; `metrics --profile` counts only that profile's calls.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeManifest } from '../helpers/temp.js';

let tmp: ReturnType<typeof tempDir>;
let catalogPath: string;
let manifest: string;
beforeEach(() => {
  tmp = tempDir();
  catalogPath = join(tmp.dir, 'catalog.json');
  // Two providers, so the dead one's refused key takes out only its own model.
  writeFileSync(
    catalogPath,
    JSON.stringify({
      providers: { up: { kind: 'mock', trainsOnData: false }, down: { kind: 'mock', trainsOnData: false } },
      models: {
        good: { hosts: [{ provider: 'up', model: 'good', contextWindow: 100000, options: { latencyMs: 0 } }] },
        dead: { hosts: [{ provider: 'down', model: 'dead', contextWindow: 100000, options: { errorRate: 1, errorKind: 'auth' } }] },
      },
    }),
  );
  manifest = writeManifest(tmp.dir, 3);
});
afterEach(() => tmp.cleanup());

const common = () => ['--data-dir', join(tmp.dir, 'data'), '--catalog', catalogPath];

describe('panoptes probe, run --probe, metrics --profile', () => {
  it('probes every host named, and exits 1 when one fails', async () => {
    const res = await runCli(['probe', '--models', 'good,dead', '--json', ...common()]);
    expect(res.code).toBe(1);
    const report = JSON.parse(res.stdout) as { results: Array<{ host: string; status: string; state: string }>; ok: number; failed: number };
    expect(report.results.map((r) => [r.host, r.status, r.state])).toEqual([
      ['up/good', 'ok', 'ready'],
      ['down/dead', 'auth', 'blacklisted'],
    ]);
    const table = await runCli(['probe', '--models', 'good', ...common()]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/up\/good\s+good\s+ok/);
    expect(table.stdout).toContain('1 answered, 0 did not');
    const unknown = await runCli(['probe', '--models', 'nope', ...common()]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('cannot probe "nope"');
  });

  it('run --probe refuses a model left without a host, before any job', async () => {
    const refused = await runCli(['run', '--manifest', manifest, '--models', 'good,dead', '--probe', '--no-progress', ...common()]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the probe left no host to call for "dead": down\/dead: auth/);
    const runs = await runCli(['runs', '--json', ...common()]);
    expect(JSON.parse(runs.stdout)).toEqual([]);
    const ok = await runCli(['run', '--manifest', manifest, '--models', 'good', '--probe', '--json', ...common()]);
    expect(ok.code).toBe(0);
  });

  it('metrics --profile counts only that profile', async () => {
    const run = await runCli(['run', '--manifest', manifest, '--models', 'good', '--json', ...common()], { PANOPTES_PROFILE: 'work' });
    expect(run.code).toBe(0);
    const work = await runCli(['metrics', '--profile', 'work', '--json', ...common()]);
    expect(work.code).toBe(0);
    const report = JSON.parse(work.stdout) as { profile: string; profiles: Array<{ profile: string; calls: number }> };
    expect(report.profile).toBe('work');
    expect(report.profiles).toEqual([expect.objectContaining({ profile: 'work', calls: 3 })]);
    const other = await runCli(['metrics', '--profile', 'home', '--json', ...common()]);
    expect(JSON.parse(other.stdout)).toMatchObject({ profiles: [], hosts: [] });
    const table = await runCli(['metrics', ...common()]);
    expect(table.stdout).toMatch(/^work\s+3\s+0\s/m);
    expect(table.stdout).toMatch(/^up\/good\s+3/m);
  });
});
