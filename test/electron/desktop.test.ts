/**
 * `panoptes desktop` (npm start): the decision between Electron and the browser on every kind of
 * machine, the Electron launch itself (a stand-in executable records what it was given), and the
 * real fallback: the built CLI, with no Electron binary, says why in one line and serves the app
 * in the browser at the printed URL.
 * Runs on: Node (tests).
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { launchElectron } from '../../core/cli/desktop-launch.js';
import { displayMissing, planDesktopLaunch, type LaunchProbe } from '../../core/cli/desktop-plan.js';
import { startCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = '/app';
const PKG = join(ROOT, 'node_modules', 'electron');

/** A machine described by its files and environment. */
function machine(files: Record<string, string>, env: NodeJS.ProcessEnv = { DISPLAY: ':0' }, platform: NodeJS.Platform = 'linux'): LaunchProbe {
  return {
    root: ROOT,
    env,
    platform,
    exists: (path) => path in files,
    read: (path) => files[path],
  };
}

const INSTALLED_ONLY = { [join(PKG, 'package.json')]: '{}' };
const DOWNLOADED = { ...INSTALLED_ONLY, [join(PKG, 'path.txt')]: 'electron', [join(PKG, 'dist', 'electron')]: '' };

describe('planDesktopLaunch', () => {
  it('launches Electron when its binary was downloaded and there is a display', () => {
    expect(planDesktopLaunch(machine(DOWNLOADED))).toEqual({ mode: 'electron', binary: join(PKG, 'dist', 'electron') });
    expect(planDesktopLaunch(machine(DOWNLOADED, { WAYLAND_DISPLAY: 'wayland-0' }))).toMatchObject({ mode: 'electron' });
  });

  it('uses the platform executable path.txt names (macOS app bundle, Windows exe)', () => {
    const mac = { ...INSTALLED_ONLY, [join(PKG, 'path.txt')]: 'Electron.app/Contents/MacOS/Electron', [join(PKG, 'dist', 'Electron.app/Contents/MacOS/Electron')]: '' };
    expect(planDesktopLaunch(machine(mac, {}, 'darwin'))).toEqual({ mode: 'electron', binary: join(PKG, 'dist', 'Electron.app/Contents/MacOS/Electron') });
    const win = { ...INSTALLED_ONLY, [join(PKG, 'path.txt')]: 'electron.exe', [join(PKG, 'dist', 'electron.exe')]: '' };
    expect(planDesktopLaunch(machine(win, {}, 'win32'))).toMatchObject({ mode: 'electron' });
  });

  it('honours ELECTRON_OVERRIDE_DIST_PATH, as the electron package does', () => {
    const files = { ...INSTALLED_ONLY, '/opt/electron/electron': '' };
    expect(planDesktopLaunch(machine(files, { DISPLAY: ':1', ELECTRON_OVERRIDE_DIST_PATH: '/opt/electron' }))).toEqual({
      mode: 'electron',
      binary: '/opt/electron/electron',
    });
    expect(planDesktopLaunch(machine(INSTALLED_ONLY, { DISPLAY: ':1', ELECTRON_OVERRIDE_DIST_PATH: '/opt/none' }))).toEqual({
      mode: 'browser',
      reason: 'ELECTRON_OVERRIDE_DIST_PATH holds no Electron binary (/opt/none/electron)',
    });
  });

  it('falls back to the browser, saying why, where Electron cannot start', () => {
    expect(planDesktopLaunch(machine({}))).toEqual({ mode: 'browser', reason: 'Electron is not installed (no node_modules/electron)' });
    expect(planDesktopLaunch(machine(INSTALLED_ONLY))).toEqual({
      mode: 'browser',
      reason: 'no Electron binary was downloaded (node_modules/electron/path.txt is missing)',
    });
    const pathButNoBinary = { ...INSTALLED_ONLY, [join(PKG, 'path.txt')]: 'electron' };
    expect(planDesktopLaunch(machine(pathButNoBinary))).toEqual({ mode: 'browser', reason: `no Electron binary at ${join('node_modules', 'electron', 'dist', 'electron')}` });
    expect(planDesktopLaunch(machine(DOWNLOADED, {}))).toEqual({ mode: 'browser', reason: 'no display (neither DISPLAY nor WAYLAND_DISPLAY is set)' });
    expect(planDesktopLaunch(machine(DOWNLOADED, { DISPLAY: '' }, 'freebsd'))).toMatchObject({ mode: 'browser' });
  });

  it('needs no DISPLAY on macOS and Windows', () => {
    expect(displayMissing({}, 'darwin')).toBeNull();
    expect(displayMissing({}, 'win32')).toBeNull();
    expect(displayMissing({}, 'linux')).toMatch(/no display/);
  });

});

describe('launchElectron', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => tmp.cleanup());

  it('starts the binary on main.js with the native binding, data dir and catalogs, and returns its exit status', async () => {
    const record = join(tmp.dir, 'launched.json');
    const binary = join(tmp.dir, 'electron');
    writeFileSync(
      binary,
      `#!${process.execPath}\nrequire('node:fs').writeFileSync(${JSON.stringify(record)}, JSON.stringify({ argv: process.argv.slice(2), env: process.env }));\nprocess.exit(3);\n`,
    );
    chmodSync(binary, 0o755);
    const status = await launchElectron({
      binary,
      main: '/app/dist/electron/main.js',
      nativeBinding: '/app/.electron-native/better_sqlite3.node',
      dataDir: '/data/panoptes',
      catalogs: ['/cfg/extra.json'],
      env: { PATH: process.env.PATH, ELECTRON_RUN_AS_NODE: '1', KEEP: 'yes' },
    });
    expect(status).toBe(3);
    const launched = JSON.parse(readFileSync(record, 'utf8')) as { argv: string[]; env: Record<string, string> };
    expect(launched.argv).toEqual(['/app/dist/electron/main.js', '--catalog=/cfg/extra.json']);
    expect(launched.env.PANOPTES_NATIVE_BINDING).toBe('/app/.electron-native/better_sqlite3.node');
    expect(launched.env.PANOPTES_DATA_DIR).toBe('/data/panoptes');
    expect(launched.env.KEEP).toBe('yes');
    expect(launched.env.ELECTRON_RUN_AS_NODE).toBeUndefined();
  });

  it('fails naming the binary when it cannot be started', async () => {
    await expect(
      launchElectron({ binary: join(tmp.dir, 'missing-electron'), main: 'main.js', nativeBinding: 'x.node', env: {} }),
    ).rejects.toThrow(/Electron did not start/);
  });
});

describe('panoptes desktop where Electron cannot start', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => (tmp = tempDir()));
  afterEach(() => tmp.cleanup());

  it('says why in one line, then serves the app in the browser at the printed URL', async () => {
    const cli = startCli(['desktop', '--data-dir', join(tmp.dir, 'data')], {
      ELECTRON_OVERRIDE_DIST_PATH: join(tmp.dir, 'no-electron-here'),
      DISPLAY: '',
      WAYLAND_DISPLAY: '',
    });
    let stdout = '';
    cli.child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const deadline = Date.now() + 30_000;
    let appUrl: string | undefined;
    while (appUrl === undefined) {
      appUrl = stdout.match(/the app is at (http:\/\/127\.0\.0\.1:\d+\/#token=\S+)/)?.[1];
      if (Date.now() > deadline) throw new Error(`no app URL; stdout:\n${stdout}\nstderr:\n${cli.stderr()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const lines = stdout.split('\n');
    expect(lines[0]).toBe(
      `panoptes: ELECTRON_OVERRIDE_DIST_PATH holds no Electron binary (${join(tmp.dir, 'no-electron-here', 'electron')}); opening the app in the browser instead`,
    );
    expect(lines.filter((l) => /Electron/.test(l))).toHaveLength(1);

    const page = await fetch(appUrl.split('#')[0]!);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toContain('<div id="root">');

    cli.child.kill('SIGTERM');
    const result = await cli.done;
    expect(result.code).toBe(0);
  });
});
