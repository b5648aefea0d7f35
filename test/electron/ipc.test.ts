/**
 * The contract over IPC: one channel per allowlisted method, the sender check before anything
 * runs, input validation naming the field, errors as plain data, the export-path grant, the
 * desktop actions' input checks, and events pushed to the window. A fake ipcMain records the
 * handlers; behind it is a real engine on a real SQLite file.
 * Runs on: Node (tests).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IpcMain, WebContents } from 'electron';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ControlEvent, Envelope, Run, RunSummary } from '../../core/service/contract.js';
import { CONTRACT_METHODS } from '../../core/service/contract.js';
import { openEngine, type Engine } from '../../core/service/engine.js';
import { initTelemetry } from '../../core/telemetry.js';
import { forwardEvents, IPC_LAYOUT, registerIpc, type DesktopActions } from '../../electron/ipc.js';
import { APP_ENTRY_URL } from '../../electron/security.js';
import { tempDir, writeManifest } from '../helpers/temp.js';

initTelemetry({ defaultLevel: 'silent' });

type Handler = (event: { senderFrame: { url: string; parent: unknown } | null }, ...args: unknown[]) => Promise<Envelope<unknown>>;

/** ipcMain as Electron behaves: one handler per channel, a second `handle` on a channel throws. */
class FakeIpcMain {
  readonly handlers = new Map<string, Handler>();
  handle(channel: string, handler: Handler): void {
    if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.handlers.set(channel, handler);
  }
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  }
}

const APP_FRAME = { url: APP_ENTRY_URL, parent: null };

describe('registerIpc', () => {
  let tmp: ReturnType<typeof tempDir>;
  let engine: Engine;
  let ipc: FakeIpcMain;
  let dispose: () => void;
  let dialogs: { manifest: string | null; exportPath: string | null; names: string[]; opened: string[] };
  let logged: Array<{ level: string; obj: object; msg: string }>;

  const call = (channel: string, frame: { url: string; parent: unknown } | null, ...args: unknown[]) => {
    const handler = ipc.handlers.get(channel);
    if (!handler) throw new Error(`no handler on ${channel}`);
    return handler({ senderFrame: frame }, ...args);
  };
  const invoke = (method: string, input?: unknown, frame = APP_FRAME) =>
    call(IPC_LAYOUT.calls[method]!, frame, ...(input === undefined ? [] : [input]));

  beforeEach(() => {
    tmp = tempDir();
    engine = openEngine({ dataDir: join(tmp.dir, 'data'), tickMs: 20 });
    ipc = new FakeIpcMain();
    dialogs = { manifest: null, exportPath: null, names: [], opened: [] };
    logged = [];
    const desktop: DesktopActions = {
      chooseManifest: async () => dialogs.manifest,
      chooseExportPath: async (name) => {
        dialogs.names.push(name);
        return dialogs.exportPath;
      },
      openExternal: async (url) => {
        dialogs.opened.push(url);
      },
    };
    dispose = registerIpc({
      ipcMain: ipc as unknown as IpcMain,
      dispatcher: engine.dispatcher,
      desktop,
      linkPolicy: { allowHttp: false },
      logger: {
        warn: (obj, msg) => logged.push({ level: 'warn', obj, msg }),
        error: (obj, msg) => logged.push({ level: 'error', obj, msg }),
      },
    });
  });

  afterEach(async () => {
    dispose();
    await engine.close();
    tmp.cleanup();
  });

  it('registers exactly one channel per contract method plus the three desktop actions', () => {
    const expected = [...CONTRACT_METHODS.map((m) => `panoptes:call:${m}`), ...Object.values(IPC_LAYOUT.desktop)];
    expect([...ipc.handlers.keys()].sort()).toEqual(expected.sort());
    expect(Object.keys(IPC_LAYOUT.calls).sort()).toEqual([...CONTRACT_METHODS].sort());
    dispose();
    expect(ipc.handlers.size).toBe(0);
  });

  it('answers the app frame with the value in an ok envelope', async () => {
    const defaults = await invoke('defaults');
    expect(defaults).toMatchObject({ ok: true, value: { dataDir: join(tmp.dir, 'data') } });
    const runs = await invoke('listRuns', { limit: 5 });
    expect(runs).toEqual({ ok: true, value: [] });
  });

  it.each([
    ['a remote page', { url: 'https://evil.com/', parent: null }],
    ['a subframe of the app', { url: APP_ENTRY_URL, parent: { url: APP_ENTRY_URL } }],
    ['a frame that is gone', null],
    ['a file:// page', { url: 'file:///tmp/index.html', parent: null }],
  ])('refuses %s before touching the engine', async (_what, frame) => {
    const manifest = writeManifest(tmp.dir, 2);
    const refused = await invoke('createRun', { manifestPath: manifest, models: ['mock-fast'], epochs: 1 }, frame as never);
    expect(refused).toEqual({
      ok: false,
      error: { code: 'auth', message: "refused: the request did not come from the app's own window", retryable: false, where: 'senderFrame' },
    });
    expect(engine.store.queries.listRuns({})).toHaveLength(0);
    const opened = await call(IPC_LAYOUT.desktop.openExternal, frame, 'https://example.com/');
    expect(opened.ok).toBe(false);
    expect(dialogs.opened).toEqual([]);
    expect(logged.filter((l) => l.level === 'warn')).toHaveLength(2);
  });

  it('validates input with the contract schema and names the field; nothing changes', async () => {
    const manifest = writeManifest(tmp.dir, 2);
    const noModels = await invoke('createRun', { manifestPath: manifest, models: [], epochs: 1 });
    expect(noModels).toMatchObject({ ok: false, error: { code: 'invalid_input', where: 'models' } });
    const zeroEpochs = await invoke('createRun', { manifestPath: manifest, models: ['mock-fast'], epochs: 0 });
    expect(zeroEpochs).toMatchObject({ ok: false, error: { code: 'invalid_input', where: 'epochs' } });
    if (zeroEpochs.ok) throw new Error('accepted');
    expect(zeroEpochs.error.message).toMatch(/^createRun: epochs: at least 1/);
    const unknownField = await invoke('getRun', { runId: 'r1', sql: 'DROP TABLE runs' });
    expect(unknownField).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    const notAnObject = await invoke('getRun', 'r1');
    expect(notAnObject).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    const oneArg = await invoke('listRuns', {});
    expect(oneArg.ok).toBe(true);
    const extraArg = await call(IPC_LAYOUT.calls.listRuns!, APP_FRAME, {}, { more: true });
    expect(extraArg).toMatchObject({ ok: false, error: { code: 'invalid_input', message: 'listRuns: takes one argument, got 2' } });
    expect(engine.store.queries.listRuns({})).toHaveLength(0);
  });

  it('returns errors as plain, cloneable data (IPC would keep only the message of an Error)', async () => {
    const missing = await invoke('getRun', { runId: 'nope' });
    expect(missing).toEqual({ ok: false, error: { code: 'not_found', message: 'no run "nope"', retryable: false, where: 'runId' } });
    if (missing.ok) throw new Error('found');
    expect(Object.getPrototypeOf(missing.error)).toBe(Object.prototype);
    expect(structuredClone(missing)).toEqual(missing);
  });

  it('reports an unexpected failure as an internal error envelope and logs it', async () => {
    const run = await createDoneRun();
    dialogs.exportPath = '/dev/null/cannot/out.jsonl';
    expect(await call(IPC_LAYOUT.desktop.chooseExportPath, APP_FRAME, 'out.jsonl')).toEqual({ ok: true, value: dialogs.exportPath });
    const failed = await invoke('exportRun', { runId: run.id, format: 'jsonl', outPath: dialogs.exportPath });
    expect(failed).toMatchObject({ ok: false, error: { code: 'internal', retryable: false } });
    expect(logged.some((l) => l.level === 'error' && l.msg === 'ipc: request failed')).toBe(true);
  });

  async function createDoneRun(): Promise<Run> {
    const manifest = writeManifest(tmp.dir, 3);
    const created = await invoke('createRun', { manifestPath: manifest, models: ['mock-fast'], epochs: 2 });
    if (!created.ok) throw new Error(created.error.message);
    const run = created.value as Run;
    engine.scheduler.start();
    const deadline = Date.now() + 20_000;
    while (engine.store.queries.getRun(run.id)?.status !== 'done') {
      if (Date.now() > deadline) throw new Error('run did not finish');
      await new Promise((r) => setTimeout(r, 20));
    }
    return run;
  }

  it('writes an export only where the user chose through the save dialog', async () => {
    const run = await createDoneRun();
    const target = join(tmp.dir, 'chosen', 'responses.jsonl');
    const unchosen = await invoke('exportRun', { runId: run.id, outPath: target });
    expect(unchosen).toMatchObject({ ok: false, error: { code: 'invalid_input', where: 'outPath' } });
    expect(existsSync(target)).toBe(false);

    dialogs.exportPath = null;
    expect(await call(IPC_LAYOUT.desktop.chooseExportPath, APP_FRAME, 'responses.jsonl')).toEqual({ ok: true, value: null });
    expect((await invoke('exportRun', { runId: run.id, outPath: target })).ok).toBe(false);

    dialogs.exportPath = target;
    expect(await call(IPC_LAYOUT.desktop.chooseExportPath, APP_FRAME, 'responses.jsonl')).toEqual({ ok: true, value: target });
    const exported = await invoke('exportRun', { runId: run.id, outPath: target });
    expect(exported).toEqual({ ok: true, value: { path: target, lines: 6 } });
    expect(readFileSync(target, 'utf8').trim().split('\n')).toHaveLength(6);
    const elsewhere = await invoke('exportRun', { runId: run.id, outPath: join(tmp.dir, 'other.jsonl') });
    expect(elsewhere.ok).toBe(false);
  });

  it('saves a report page only where the user chose through the save dialog, and answers with it otherwise', async () => {
    const run = await createDoneRun();
    expect((await invoke('scoreRun', { runId: run.id, scorers: { scorers: [{ name: 'exact', type: 'match' }] } })).ok).toBe(true);
    await engine.scoring.finish(run.id);
    const target = join(tmp.dir, 'chosen', 'report.html');
    const unchosen = await invoke('reportHtml', { runId: run.id, outPath: target });
    expect(unchosen).toMatchObject({ ok: false, error: { code: 'invalid_input', where: 'outPath' } });
    expect(existsSync(target)).toBe(false);

    dialogs.exportPath = target;
    expect((await call(IPC_LAYOUT.desktop.chooseExportPath, APP_FRAME, 'report.html')).ok).toBe(true);
    const saved = await invoke('reportHtml', { runId: run.id, outPath: target });
    expect(saved).toMatchObject({ ok: true, value: { path: target, scorer: 'exact', rows: 3, total: 3 } });
    expect(readFileSync(target, 'utf8')).toMatch(/^<!DOCTYPE html>[\s\S]*id="report-data"/);

    const page = await invoke('reportHtml', { runId: run.id });
    expect(page).toMatchObject({ ok: true, value: { fileName: `${run.id}-exact-report.html`, html: expect.stringContaining('<!DOCTYPE html>') } });
  });

  it('gives the save dialog a bare file name, never a path', async () => {
    dialogs.exportPath = null;
    for (const name of ['../../.bashrc', '/etc/passwd', 'C:\\Windows\\system.ini', 'run r1 (final).csv']) {
      expect((await call(IPC_LAYOUT.desktop.chooseExportPath, APP_FRAME, name)).ok).toBe(true);
    }
    expect(dialogs.names).toEqual(['.bashrc', 'passwd', 'system.ini', 'run_r1__final_.csv']);
    for (const bad of ['', '..', 42, 'x'.repeat(300)]) {
      expect(await call(IPC_LAYOUT.desktop.chooseExportPath, APP_FRAME, bad)).toMatchObject({
        ok: false,
        error: { code: 'invalid_input', where: 'defaultName' },
      });
    }
    expect(dialogs.names).toHaveLength(4);
  });

  it('returns the manifest the user picked, or null when they cancelled', async () => {
    expect(await call(IPC_LAYOUT.desktop.chooseManifest, APP_FRAME)).toEqual({ ok: true, value: null });
    dialogs.manifest = '/home/u/vignettes.jsonl';
    expect(await call(IPC_LAYOUT.desktop.chooseManifest, APP_FRAME)).toEqual({ ok: true, value: '/home/u/vignettes.jsonl' });
  });

  it('opens only validated links in the system browser', async () => {
    expect(await call(IPC_LAYOUT.desktop.openExternal, APP_FRAME, 'https://example.com/docs')).toEqual({ ok: true, value: null });
    for (const url of ['https://evil.com@trusted.com/', 'javascript:alert(1)', 'http://example.com/', 'file:///etc/passwd', 'https://xn--pypal-4ve.com/']) {
      expect(await call(IPC_LAYOUT.desktop.openExternal, APP_FRAME, url)).toMatchObject({ ok: false, error: { code: 'invalid_input', where: 'url' } });
    }
    expect(dialogs.opened).toEqual(['https://example.com/docs']);
  });

  it('pushes run events to the window until it is destroyed', async () => {
    const sent: Array<[string, ControlEvent]> = [];
    let destroyed = false;
    const contents = {
      send: (channel: string, event: ControlEvent) => sent.push([channel, event]),
      isDestroyed: () => destroyed,
    };
    const stop = forwardEvents(engine.service, contents as unknown as WebContents);
    const run = await createDoneRun();
    const deadline = Date.now() + 5_000;
    const lastStatus = () => [...sent].reverse().find(([, e]) => e.type === 'run' && e.run.id === run.id)?.[1] as { run: RunSummary } | undefined;
    while (lastStatus()?.run.status !== 'done') {
      if (Date.now() > deadline) throw new Error('no done event');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(sent.every(([channel]) => channel === IPC_LAYOUT.event)).toBe(true);
    expect(lastStatus()!.run.doneCount).toBe(2);

    destroyed = true;
    const before = sent.length;
    await invoke('createRun', { manifestPath: writeManifest(tmp.dir, 1, 'one.jsonl'), models: ['mock-fast'], epochs: 1 });
    await new Promise((r) => setTimeout(r, 300));
    expect(sent.length).toBe(before);
    stop();
  });
});
