/**
 * The emitted preload (dist/electron/preload.cjs), run the way a sandboxed renderer runs it: a
 * CommonJS script whose `require` knows only 'electron'. It must expose exactly the DesktopBridge
 * as `window.panoptes`, call only the channels main announced, never hand out ipcRenderer or an
 * IPC event, and unwrap the desktop actions' envelopes.
 * Needs a build (`npm run build`, which `npm test` runs first).
 * Runs on: Node (tests).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CONTRACT_METHODS, type DesktopBridge } from '../../core/service/contract.js';
import { IPC_LAYOUT, ipcLayoutArgument } from '../../electron/ipc.js';

const PRELOAD = resolve('dist/electron/preload.cjs');

/** ipcRenderer as the preload sees it: invoke resolves with what main would answer; `on` keeps listeners. */
class FakeIpcRenderer {
  readonly invoked: Array<[string, unknown[]]> = [];
  readonly listeners = new Map<string, Set<(...args: unknown[]) => void>>();
  answer: (channel: string, args: unknown[]) => unknown = () => ({ ok: true, value: null });
  invoke(channel: string, ...args: unknown[]): Promise<unknown> {
    this.invoked.push([channel, args]);
    return Promise.resolve(this.answer(channel, args));
  }
  on(channel: string, listener: (...args: unknown[]) => void): this {
    if (!this.listeners.has(channel)) this.listeners.set(channel, new Set());
    this.listeners.get(channel)!.add(listener);
    return this;
  }
  removeListener(channel: string, listener: (...args: unknown[]) => void): this {
    this.listeners.get(channel)?.delete(listener);
    return this;
  }
  emit(channel: string, payload: unknown): void {
    for (const l of this.listeners.get(channel) ?? []) l({ sender: this, senderId: 0 }, payload);
  }
}

interface Loaded {
  exposed: Map<string, unknown>;
  required: string[];
  ipc: FakeIpcRenderer;
  exports: unknown;
}

/** Runs the preload in a fresh context with a sandbox-like `require` and `process`. */
function loadPreload(processType: string | undefined, argv: string[] = ['electron', ipcLayoutArgument()]): Loaded {
  if (!existsSync(PRELOAD)) throw new Error(`${PRELOAD} is missing: run npm run build first`);
  const exposed = new Map<string, unknown>();
  const required: string[] = [];
  const ipc = new FakeIpcRenderer();
  const electron = {
    contextBridge: { exposeInMainWorld: (key: string, api: unknown) => exposed.set(key, api) },
    ipcRenderer: ipc,
  };
  const module = { exports: {} as unknown };
  const sandbox = {
    module,
    exports: module.exports,
    process: { type: processType, argv },
    require: (id: string) => {
      required.push(id);
      if (id === 'electron') return electron;
      throw new Error(`a sandboxed preload cannot require "${id}"`);
    },
  };
  runInNewContext(readFileSync(PRELOAD, 'utf8'), sandbox, { filename: PRELOAD });
  return { exposed, required, ipc, exports: module.exports };
}

function bridgeOf(loaded: Loaded): DesktopBridge {
  return loaded.exposed.get('panoptes') as DesktopBridge;
}

describe('preload.cjs', () => {
  it('is CommonJS that requires nothing but electron, and exposes only window.panoptes', () => {
    const loaded = loadPreload('renderer');
    expect(loaded.required).toEqual(['electron']);
    expect([...loaded.exposed.keys()]).toEqual(['panoptes']);
  });

  it('exposes exactly the DesktopBridge: five functions, frozen, no ipcRenderer', () => {
    const loaded = loadPreload('renderer');
    const bridge = bridgeOf(loaded);
    expect(Object.keys(bridge).sort()).toEqual(['chooseExportPath', 'chooseManifest', 'invoke', 'onEvent', 'openExternal']);
    expect(Object.values(bridge).every((v) => typeof v === 'function')).toBe(true);
    expect(Object.isFrozen(bridge)).toBe(true);
    expect(Object.values(bridge)).not.toContain(loaded.ipc);
  });

  it('does nothing but define its functions outside a renderer (under Node, in main)', () => {
    const loaded = loadPreload(undefined);
    expect(loaded.required).toEqual([]);
    expect(loaded.exposed.size).toBe(0);
    expect(Object.keys(loaded.exports as object).sort()).toEqual(['LAYOUT_FLAG', 'createDesktopBridge', 'readLayout']);
    expect((loaded.exports as { LAYOUT_FLAG: string }).LAYOUT_FLAG).toBe(ipcLayoutArgument().split('=')[0] + '=');
  });

  it('refuses to start without the channel layout from main, or with a forged one', () => {
    expect(() => loadPreload('renderer', ['electron'])).toThrow(/no --panoptes-ipc= argument/);
    expect(() => loadPreload('renderer', ['electron', '--panoptes-ipc={"calls":{},"event":"x"}'])).toThrow(/malformed/);
    expect(() =>
      loadPreload('renderer', ['electron', `--panoptes-ipc=${JSON.stringify({ ...IPC_LAYOUT, calls: { createRun: 'other:channel' } })}`]),
    ).toThrow(/malformed/);
  });

  it('sends each contract method to its own channel with the input as the one argument', async () => {
    const loaded = loadPreload('renderer');
    const bridge = bridgeOf(loaded);
    loaded.ipc.answer = (channel) => ({ ok: true, value: channel });
    for (const method of CONTRACT_METHODS) {
      const input = { probe: method };
      await expect(bridge.invoke(method, input as never)).resolves.toEqual({ ok: true, value: `panoptes:call:${method}` });
      expect(loaded.ipc.invoked.at(-1)).toEqual([`panoptes:call:${method}`, [input]]);
    }
  });

  it.each(['dropDatabase', '__proto__', 'constructor', 'toString', 'chooseManifest', 42, null])(
    'answers an unknown method (%j) with an error envelope and sends nothing',
    async (method) => {
      const loaded = loadPreload('renderer');
      const result = await bridgeOf(loaded).invoke(method as never, {} as never);
      expect(result).toMatchObject({ ok: false, error: { code: 'invalid_input', where: 'method' } });
      expect(loaded.ipc.invoked).toEqual([]);
    },
  );

  it('hands listeners the event payload only, and unsubscribes', () => {
    const loaded = loadPreload('renderer');
    const bridge = bridgeOf(loaded);
    const seen: unknown[][] = [];
    const off = bridge.onEvent((...args: unknown[]) => seen.push(args));
    const event = { type: 'workers', workers: [] };
    loaded.ipc.emit(IPC_LAYOUT.event, event);
    expect(seen).toEqual([[event]]);
    off();
    loaded.ipc.emit(IPC_LAYOUT.event, event);
    expect(seen).toHaveLength(1);
    expect(() => bridge.onEvent('not a function' as never)).toThrow(/listener must be a function/);
  });

  it('unwraps desktop actions: the value, or a rejection carrying the code and message', async () => {
    const loaded = loadPreload('renderer');
    const bridge = bridgeOf(loaded);
    loaded.ipc.answer = (channel, args) =>
      channel === IPC_LAYOUT.desktop.openExternal
        ? { ok: false, error: { code: 'invalid_input', message: 'openExternal: not https', retryable: false, where: 'url' } }
        : { ok: true, value: channel === IPC_LAYOUT.desktop.chooseManifest ? '/m.jsonl' : `/out/${String(args[0])}` };
    await expect(bridge.chooseManifest()).resolves.toBe('/m.jsonl');
    await expect(bridge.chooseExportPath('r1.jsonl')).resolves.toBe('/out/r1.jsonl');
    await expect(bridge.openExternal('javascript:alert(1)')).rejects.toThrow('invalid_input: openExternal: not https');
    expect(loaded.ipc.invoked.map(([c]) => c)).toEqual([
      IPC_LAYOUT.desktop.chooseManifest,
      IPC_LAYOUT.desktop.chooseExportPath,
      IPC_LAYOUT.desktop.openExternal,
    ]);
  });
});
