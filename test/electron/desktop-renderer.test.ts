/**
 * The desktop app's wiring end to end, with real Chromium playing Electron's window where no
 * Electron binary exists: the built renderer is served by the app:// protocol handler (so under
 * the app's CSP), the real preload (dist/electron/preload.cjs) runs in the page with a sandbox-like
 * `require` that knows only 'electron', its ipcRenderer calls cross to the real IPC handlers
 * (electron/ipc.ts) in this process, in front of a real engine on a real SQLite file, and
 * pushed events come back the same way. The native dialogs are the only stand-ins. A user makes a
 * run from a chosen manifest, watches it finish, and saves the export through the save dialog.
 * Screenshots go to test-results/electron/.
 * Runs on: Node (tests), driving Chromium.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { IpcMain, WebContents } from 'electron';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toJsonlLine } from '../../core/export.js';
import type { Envelope } from '../../core/service/contract.js';
import { openEngine, type Engine } from '../../core/service/engine.js';
import { initTelemetry } from '../../core/telemetry.js';
import { createAppProtocolHandler } from '../../electron/app-protocol.js';
import { forwardEvents, ipcLayoutArgument, registerIpc } from '../../electron/ipc.js';
import { APP_ENTRY_URL } from '../../electron/security.js';
import { tempDir, writeManifest } from '../helpers/temp.js';

initTelemetry({ defaultLevel: 'silent' });

const CHROMIUM = process.env.PANOPTES_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const RENDERER = resolve('dist/renderer');
const PRELOAD = resolve('dist/electron/preload.cjs');
const SHOTS = resolve('test-results', 'electron');
const WAIT = { timeout: 30_000, interval: 50 };

type Handler = (event: { senderFrame: { url: string; parent: null } }, ...args: unknown[]) => Promise<Envelope<unknown>>;

/** The page side of the emulation: the real preload, run as a sandboxed preload is (CommonJS, `require('electron')` only). */
function preloadInitScript(): string {
  return `(() => {
    const listeners = new Map();
    const ipcRenderer = {
      invoke: (channel, ...args) => window.__panoptesIpcInvoke(channel, args),
      on(channel, listener) {
        if (!listeners.has(channel)) listeners.set(channel, new Set());
        listeners.get(channel).add(listener);
        return this;
      },
      removeListener(channel, listener) {
        listeners.get(channel)?.delete(listener);
        return this;
      },
    };
    window.__panoptesIpcEmit = (channel, payload) => {
      for (const listener of listeners.get(channel) ?? []) listener({}, payload);
    };
    const electron = {
      contextBridge: { exposeInMainWorld: (key, api) => Object.defineProperty(window, key, { value: api }) },
      ipcRenderer,
    };
    const module = { exports: {} };
    (function (require, module, exports, process) {
${readFileSync(PRELOAD, 'utf8')}
    })(
      (id) => { if (id === 'electron') return electron; throw new Error('a sandboxed preload cannot require ' + id); },
      module, module.exports, { type: 'renderer', argv: ${JSON.stringify(['electron', ipcLayoutArgument()])} },
    );
  })();`;
}

/** The app:// handler behind 127.0.0.1, so Chromium loads exactly what the window would. */
async function serveRenderer(): Promise<{ server: Server; origin: string }> {
  const handler = createAppProtocolHandler(RENDERER);
  const server = createServer((req, res) => {
    void handler(new Request(`app://panoptes${req.url ?? '/'}`, { method: req.method ?? 'GET' })).then(async (response) => {
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const missing = [CHROMIUM, join(RENDERER, 'index.html'), PRELOAD].filter((p) => !existsSync(p));

describe.skipIf(missing.length > 0)(
  `the desktop app's renderer, preload and IPC in Chromium${missing.length ? ` (skipped: missing ${missing.join(', ')}; npm run build)` : ''}`,
  () => {
    let tmp: ReturnType<typeof tempDir>;
    let engine: Engine;
    let browser: Browser;
    let page: Page;
    let served: { server: Server; origin: string };
    let stopEvents: () => void;
    let disposeIpc: () => void;
    const handlers = new Map<string, Handler>();
    const problems: string[] = [];
    const dialogs = { manifest: '', exportPath: '', exportNames: [] as string[] };

    beforeAll(async () => {
      tmp = tempDir();
      engine = openEngine({ dataDir: join(tmp.dir, 'data') });
      engine.scheduler.start();
      dialogs.manifest = writeManifest(tmp.dir, 5, 'chosen.jsonl');
      dialogs.exportPath = join(tmp.dir, 'saved', 'responses.jsonl');
      disposeIpc = registerIpc({
        ipcMain: { handle: (channel: string, h: Handler) => handlers.set(channel, h), removeHandler: (c: string) => handlers.delete(c) } as unknown as IpcMain,
        dispatcher: engine.dispatcher,
        desktop: {
          chooseManifest: async () => dialogs.manifest,
          chooseExportPath: async (name) => {
            dialogs.exportNames.push(name);
            return dialogs.exportPath;
          },
          openExternal: async () => {},
        },
        linkPolicy: { allowHttp: false },
        logger: { warn: (obj, msg) => problems.push(`main: ${msg} ${JSON.stringify(obj)}`), error: (obj, msg) => problems.push(`main: ${msg} ${JSON.stringify(obj)}`) },
      });
      served = await serveRenderer();
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
      page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`exception: ${e.message}`));
      page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
      await page.exposeBinding('__panoptesIpcInvoke', async (_source, channel: string, args: unknown[]) => {
        const handler = handlers.get(channel);
        if (!handler) throw new Error(`No handler registered for '${channel}'`);
        // The window's top frame, as Electron reports it for the app's own page.
        return handler({ senderFrame: { url: APP_ENTRY_URL, parent: null } }, ...args);
      });
      await page.addInitScript(preloadInitScript());
      stopEvents = forwardEvents(engine.service, {
        isDestroyed: () => page.isClosed(),
        send: (channel: string, payload: unknown) => {
          void page.evaluate(([c, p]) => (globalThis as unknown as { __panoptesIpcEmit(c: unknown, p: unknown): void }).__panoptesIpcEmit(c, p), [channel, payload]).catch(() => {});
        },
      } as unknown as WebContents);
      mkdirSync(SHOTS, { recursive: true });
    });

    afterAll(async () => {
      stopEvents?.();
      disposeIpc?.();
      await browser?.close();
      served?.server.close();
      await engine?.close();
      tmp?.cleanup();
    });

    it('runs in desktop mode: window.panoptes is the bridge, and nothing else leaked into the page', async () => {
      await page.goto(`${served.origin}/index.html`);
      await page.getByTestId('try-example').waitFor();
      const surface = await page.evaluate(`({
        bridge: Object.keys(window.panoptes).sort(),
        frozen: Object.isFrozen(window.panoptes),
        require: typeof require,
        module: typeof module,
      })`);
      expect(surface).toEqual({
        bridge: ['chooseExportPath', 'chooseManifest', 'invoke', 'onEvent', 'openExternal'],
        frozen: true,
        require: 'undefined',
        module: 'undefined',
      });
      await page.screenshot({ path: join(SHOTS, '01-first-launch.png') });
    });

    it('makes a run from the manifest the file dialog picked and watches it finish through pushed events', async () => {
      await page.getByTestId('try-example').click();
      const create = page.getByTestId('create-run');
      await expect.poll(() => create.textContent(), WAIT).toBe('Create run · 144 calls');
      await page.getByRole('button', { name: 'Choose file…' }).click();
      await expect.poll(() => page.getByTestId('vignette-count').textContent(), WAIT).toBe('5');
      expect(await page.getByTestId('manifest-path').inputValue()).toBe(dialogs.manifest);
      // 5 vignettes x the 2 default mock models x 3 epochs.
      await expect.poll(() => create.textContent(), WAIT).toBe('Create run · 30 calls');
      await page.screenshot({ path: join(SHOTS, '02-new-run.png'), fullPage: true });
      await create.click();
      await page.waitForURL(/#\/runs\/r[0-9a-z]+$/);
      const runId = decodeURIComponent(page.url().split('#/runs/')[1]!);
      await expect.poll(() => page.locator('.view-header [data-testid=status]').first().textContent(), WAIT).toBe('done');
      expect(await page.getByTestId('metric-progress').textContent()).toContain('30 / 30');
      expect(engine.store.queries.getRun(runId)?.status).toBe('done');
      await page.screenshot({ path: join(SHOTS, '03-run-done.png') });
    });

    it('draws the charts under the CSP', async () => {
      const [run] = engine.store.queries.listRuns({});
      await page.goto(`${served.origin}/index.html#/stats/${run!.id}`);
      await expect.poll(() => page.locator('svg.recharts-surface').count(), WAIT).toBeGreaterThan(0);
      await page.screenshot({ path: join(SHOTS, '04-stats.png'), fullPage: true });
    });

    it('saves the export where the save dialog said, identical to the database', async () => {
      const [run] = engine.store.queries.listRuns({});
      await page.goto(`${served.origin}/index.html#/export/${run!.id}`);
      await page.getByTestId('export-button').click();
      await page.getByTestId('export-done').waitFor();
      expect(await page.getByTestId('export-done').textContent()).toBe(`Saved 30 lines to ${dialogs.exportPath}`);
      expect(dialogs.exportNames).toEqual([`${run!.id}-responses.jsonl`]);
      const rows = [...engine.store.queries.iterateResponses(run!.id)];
      expect(readFileSync(dialogs.exportPath, 'utf8')).toBe(rows.map((r) => `${toJsonlLine(r)}\n`).join(''));
      await page.screenshot({ path: join(SHOTS, '05-export-saved.png') });
    });

    it('saw no console error (a CSP violation is one), exception, failed request or refused IPC call', () => {
      expect(problems).toEqual([]);
    });
  },
);
