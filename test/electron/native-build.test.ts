/**
 * scripts/electron-native.mjs: the Electron-ABI better-sqlite3 build goes to its own folder from a
 * staged copy of the sources, never touching node_modules' Node build; it is skipped while
 * Electron, better-sqlite3, platform and arch are unchanged, and leaves nothing half-done when the
 * build fails. `@electron/rebuild` needs Electron's headers from the network, which this machine
 * lacks, so the rebuild step is handed in: it compiles nothing, it writes the addon where
 * node-gyp would.
 * Also: better-sqlite3's `nativeBinding` reaches the Store through `openEngine`.
 * Runs on: Node (tests).
 */
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEngine } from '../../core/service/engine.js';
import { initTelemetry } from '../../core/telemetry.js';
import { buildElectronNative, nativeBindingPath, type Rebuild } from '../../scripts/electron-native.mjs';
import { tempDir } from '../helpers/temp.js';

initTelemetry({ defaultLevel: 'silent' });

/** A package root with the two packages the build reads: electron's version and better-sqlite3's sources and Node build. */
function fakeRoot(dir: string, electronVersion = '42.11.18'): string {
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, 'electron'), { recursive: true });
  writeFileSync(join(modules, 'electron', 'package.json'), JSON.stringify({ name: 'electron', version: electronVersion }));
  const sqlite = join(modules, 'better-sqlite3');
  mkdirSync(join(sqlite, 'src'), { recursive: true });
  mkdirSync(join(sqlite, 'build', 'Release'), { recursive: true });
  writeFileSync(join(sqlite, 'package.json'), JSON.stringify({ name: 'better-sqlite3', version: '12.11.1' }));
  writeFileSync(join(sqlite, 'binding.gyp'), '{}');
  writeFileSync(join(sqlite, 'src', 'better_sqlite3.cpp'), '// sources');
  writeFileSync(join(sqlite, 'build', 'Release', 'better_sqlite3.node'), 'NODE-ABI BUILD');
  return dir;
}

/** Stands in for @electron/rebuild: records its options and what it was given, writes the addon node-gyp would. */
function recordingRebuild(calls: Array<{ options: Parameters<Rebuild>[0]; staged: string[] }>, outcome: 'ok' | 'fail' | 'no-output' = 'ok'): Rebuild {
  return async (options) => {
    const module = join(options.buildPath, 'node_modules', 'better-sqlite3');
    calls.push({ options, staged: readdirSync(module).sort() });
    if (outcome === 'fail') throw new Error('gyp ERR! headers unreachable');
    if (outcome === 'no-output') return;
    mkdirSync(join(module, 'build', 'Release'), { recursive: true });
    writeFileSync(join(module, 'build', 'Release', 'better_sqlite3.node'), `ELECTRON ${options.electronVersion} BUILD`);
  };
}

describe('buildElectronNative', () => {
  let tmp: ReturnType<typeof tempDir>;
  let root: string;
  beforeEach(() => {
    tmp = tempDir();
    root = fakeRoot(tmp.dir);
  });
  afterEach(() => tmp.cleanup());

  it('builds from a staged copy of the sources into .electron-native/, leaving the Node build alone', async () => {
    const calls: Array<{ options: Parameters<Rebuild>[0]; staged: string[] }> = [];
    const result = await buildElectronNative({ root, rebuild: recordingRebuild(calls) });
    expect(result).toEqual({
      path: join(root, '.electron-native', 'better_sqlite3.node'),
      built: true,
      electron: '42.11.18',
      betterSqlite3: '12.11.1',
      platform: process.platform,
      arch: process.arch,
    });
    expect(result.path).toBe(nativeBindingPath(root));
    expect(readFileSync(result.path, 'utf8')).toBe('ELECTRON 42.11.18 BUILD');
    expect(readFileSync(join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'), 'utf8')).toBe('NODE-ABI BUILD');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.options).toEqual({
      buildPath: join(root, '.electron-native', 'stage'),
      electronVersion: '42.11.18',
      arch: process.arch,
      onlyModules: ['better-sqlite3'],
      force: true,
    });
    expect(calls[0]!.staged).toEqual(['binding.gyp', 'package.json', 'src']);
    expect(readdirSync(join(root, '.electron-native')).sort()).toEqual(['better_sqlite3.node', 'build.json']);
  });

  it('skips the build while nothing it depends on changed, and rebuilds when Electron does', async () => {
    const calls: Array<{ options: Parameters<Rebuild>[0]; staged: string[] }> = [];
    await buildElectronNative({ root, rebuild: recordingRebuild(calls) });
    const again = await buildElectronNative({ root, rebuild: recordingRebuild(calls) });
    expect(again.built).toBe(false);
    expect(calls).toHaveLength(1);
    const forced = await buildElectronNative({ root, force: true, rebuild: recordingRebuild(calls) });
    expect(forced.built).toBe(true);
    expect(calls).toHaveLength(2);

    fakeRoot(tmp.dir, '43.0.0');
    const upgraded = await buildElectronNative({ root, rebuild: recordingRebuild(calls) });
    expect(upgraded).toMatchObject({ built: true, electron: '43.0.0' });
    expect(readFileSync(upgraded.path, 'utf8')).toBe('ELECTRON 43.0.0 BUILD');
    expect(JSON.parse(readFileSync(join(root, '.electron-native', 'build.json'), 'utf8')).electron).toBe('43.0.0');
  });

  it('leaves no addon, no stamp and no staging behind when the build fails', async () => {
    const calls: Array<{ options: Parameters<Rebuild>[0]; staged: string[] }> = [];
    await expect(buildElectronNative({ root, rebuild: recordingRebuild(calls, 'fail') })).rejects.toThrow('gyp ERR! headers unreachable');
    await expect(buildElectronNative({ root, rebuild: recordingRebuild(calls, 'no-output') })).rejects.toThrow(/left no .*better_sqlite3\.node/);
    expect(readdirSync(join(root, '.electron-native'))).toEqual([]);
  });

  it('keeps a previous good build when a forced rebuild fails', async () => {
    const calls: Array<{ options: Parameters<Rebuild>[0]; staged: string[] }> = [];
    const good = await buildElectronNative({ root, rebuild: recordingRebuild(calls) });
    await expect(buildElectronNative({ root, force: true, rebuild: recordingRebuild(calls, 'fail') })).rejects.toThrow();
    expect(readFileSync(good.path, 'utf8')).toBe('ELECTRON 42.11.18 BUILD');
    expect((await buildElectronNative({ root, rebuild: recordingRebuild(calls) })).built).toBe(false);
  });
});

describe('openEngine({ nativeBinding })', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => tmp.cleanup());

  it('loads better-sqlite3 from the addon it is given', async () => {
    const nodeBuild = resolve('node_modules/better-sqlite3/build/Release/better_sqlite3.node');
    const copy = join(tmp.dir, 'native', 'better_sqlite3.node');
    mkdirSync(join(tmp.dir, 'native'));
    cpSync(nodeBuild, copy);
    const engine = openEngine({ dataDir: join(tmp.dir, 'data'), nativeBinding: copy });
    expect(engine.store.schemaVersion()).toBeGreaterThan(0);
    await engine.close();
  });

  it('fails naming the addon when it is not there', () => {
    const missing = join(tmp.dir, 'nowhere', 'better_sqlite3.node');
    expect(() => openEngine({ dataDir: join(tmp.dir, 'data'), nativeBinding: missing })).toThrow(/nowhere[/\\]better_sqlite3\.node/);
    expect(existsSync(join(tmp.dir, 'data', 'panoptes.db'))).toBe(false);
  });
});
