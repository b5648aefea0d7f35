/**
 * The desktop app in real Electron (playwright-core's `_electron.launch`): the window loads the
 * renderer from app://panoptes under its CSP, sandboxed and isolated, exposes exactly the bridge,
 * refuses to navigate or open windows, answers the contract over IPC with errors as data, and
 * takes a run from the first-launch example to done by clicking.
 * Runs where an Electron binary exists (and a display, on Linux); elsewhere it is skipped and the
 * skip names the reason. Before launching it builds the Electron-ABI better-sqlite3 as
 * `npm start` does (scripts/electron-native.mjs; the first time takes a minute and the network).
 * Runs on: Node (tests), driving Electron.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { _electron, type ElectronApplication, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { displayMissing, findElectronBinary, nodeProbe } from '../../core/cli/desktop-plan.js';
import { buildElectronNative } from '../../scripts/electron-native.mjs';
import { tempDir } from '../helpers/temp.js';

const ROOT = resolve('.');
const MAIN = join(ROOT, 'dist', 'electron', 'main.js');
const SHOTS = resolve('test-results', 'electron');
const WAIT = { timeout: 30_000, interval: 50 };

function whyNot(): string | null {
  const found = findElectronBinary(nodeProbe(ROOT));
  if ('reason' in found) return found.reason;
  const noDisplay = displayMissing(process.env, process.platform);
  if (noDisplay !== null) return noDisplay;
  if (!existsSync(MAIN) || !existsSync(join(ROOT, 'dist', 'renderer', 'index.html'))) return 'the app is not built (npm run build)';
  return null;
}

const skipReason = whyNot();
if (skipReason !== null) process.stderr.write(`electron-e2e: skipped: ${skipReason}\n`);

describe.skipIf(skipReason !== null)(`the desktop app in Electron${skipReason === null ? '' : ` (skipped: ${skipReason})`}`, () => {
  let tmp: ReturnType<typeof tempDir>;
  let app: ElectronApplication;
  let window: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    tmp = tempDir();
    const found = findElectronBinary(nodeProbe(ROOT));
    if (!('binary' in found)) throw new Error(found.reason);
    const native = await buildElectronNative({ root: ROOT, log: (line) => process.stderr.write(`electron-e2e: ${line}\n`) });
    app = await _electron.launch({
      executablePath: found.binary,
      args: [MAIN, `--user-data-dir=${join(tmp.dir, 'user-data')}`],
      env: {
        ...(process.env as Record<string, string>),
        PANOPTES_DATA_DIR: join(tmp.dir, 'data'),
        PANOPTES_NATIVE_BINDING: native.path,
        PANOPTES_LOG: 'warn',
        // userData (settings, saved keys, the single-instance lock) in the temp dir, not the user's.
        XDG_CONFIG_HOME: join(tmp.dir, 'config'),
        APPDATA: join(tmp.dir, 'config'),
      },
    });
    window = await app.firstWindow();
    window.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    window.on('pageerror', (e) => problems.push(`exception: ${e.message}`));
    await window.waitForLoadState('domcontentloaded');
    mkdirSync(SHOTS, { recursive: true });
  }, 600_000);

  afterAll(async () => {
    await app?.close();
    tmp?.cleanup();
  });

  it('loads the renderer from app://panoptes, with the bridge and without Node', async () => {
    expect(window.url()).toBe('app://panoptes/index.html');
    const surface = await window.evaluate(`({
      bridge: Object.keys(window.panoptes).sort(),
      require: typeof require,
      process: typeof process,
      ipcRenderer: typeof window.ipcRenderer,
    })`);
    expect(surface).toEqual({
      bridge: ['chooseExportPath', 'chooseManifest', 'invoke', 'onEvent', 'openExternal'],
      require: 'undefined',
      process: 'undefined',
      ipcRenderer: 'undefined',
    });
  });

  it('answers the contract over IPC, errors as data', async () => {
    const answers = await window.evaluate(`(async () => [
      await window.panoptes.invoke('defaults', undefined),
      await window.panoptes.invoke('getRun', {}),
      await window.panoptes.invoke('dropTables', {}),
      await window.panoptes.openExternal('javascript:alert(1)').then(() => 'opened', (e) => e.message),
    ])()`);
    const [defaults, invalid, unknown, refusedLink] = answers as [
      { ok: boolean; value: { dataDir: string } },
      { ok: boolean; error: { code: string; where: string } },
      { ok: boolean; error: { code: string } },
      string,
    ];
    expect(defaults.ok).toBe(true);
    expect(defaults.value.dataDir).toBe(join(tmp.dir, 'data'));
    expect(invalid).toMatchObject({ ok: false, error: { code: 'invalid_input', where: 'runId' } });
    expect(unknown).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    expect(refusedLink).toMatch(/^invalid_input: openExternal: only https links/);
  });

  it('takes the first-launch example to done by clicking', async () => {
    await window.evaluate(`location.hash = '#/runs'`);
    await window.getByTestId('try-example').click();
    const create = window.getByTestId('create-run');
    await expect.poll(() => create.textContent(), WAIT).toBe('Create run · 144 calls');
    await create.click();
    await window.waitForURL(/#\/runs\/r[0-9a-z]+$/);
    await expect.poll(() => window.locator('.view-header [data-testid=status]').first().textContent(), WAIT).toBe('done');
    expect(await window.getByTestId('metric-progress').textContent()).toContain('144 / 144');
    await window.screenshot({ path: join(SHOTS, 'electron-run-done.png') });
  });

  it('logged no console error (a CSP violation is one) or exception', () => {
    expect(problems).toEqual([]);
  });

  it('enforces the CSP: an injected inline script does not run', async () => {
    const ran = await window.evaluate(`(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__injected = true';
      document.head.appendChild(s);
      return window.__injected === true;
    })()`);
    expect(ran).toBe(false);
  });

  it('stays on the app: navigation away and new windows are refused', async () => {
    await window.evaluate(`window.location.href = 'https://example.com/'`);
    await window.evaluate(`window.open('file:///etc/passwd')`);
    await new Promise((r) => setTimeout(r, 500));
    expect(window.url()).toMatch(/^app:\/\/panoptes\//);
    expect(app.windows()).toHaveLength(1);
  });
});
