/**
 * The preload: exposes exactly the `DesktopBridge` of the contract to the renderer as
 * `window.panoptes`, through `contextBridge` — never `ipcRenderer` itself, never an IPC event
 * object (its `sender` would be ipcRenderer). Contract calls go only to the channels main
 * announced for the contract's methods; anything else resolves to an error envelope.
 * Written as CommonJS (.cts -> preload.cjs) and self-contained: a sandboxed preload may require
 * nothing but 'electron'. Main hands it the channel layout as a launch argument.
 * Runs on: Electron renderer (sandboxed preload).
 */
import type { IpcRenderer } from 'electron';
import type { ControlEvent, DesktopBridge, Envelope } from '../core/service/contract.js';
import type { IpcLayout } from './ipc.js';

const LAYOUT_FLAG = '--panoptes-ipc=';

function isChannelMap(value: unknown, keys?: readonly string[]): value is Record<string, string> {
  if (typeof value !== 'object' || value === null) return false;
  const entries = Object.entries(value);
  if (!entries.every(([, channel]) => typeof channel === 'string' && channel.startsWith('panoptes:'))) return false;
  return keys === undefined || keys.every((k) => typeof (value as Record<string, unknown>)[k] === 'string');
}

/** The channel layout main passed in `additionalArguments`; throws when it is missing or malformed. */
function readLayout(argv: readonly string[]): IpcLayout {
  const arg = argv.find((a) => a.startsWith(LAYOUT_FLAG));
  if (arg === undefined) throw new Error(`panoptes preload: no ${LAYOUT_FLAG} argument from the main process`);
  const layout = JSON.parse(arg.slice(LAYOUT_FLAG.length)) as Partial<IpcLayout>;
  if (
    !isChannelMap(layout.calls) ||
    typeof layout.event !== 'string' ||
    !isChannelMap(layout.desktop, ['chooseManifest', 'chooseExportPath', 'openExternal'])
  ) {
    throw new Error(`panoptes preload: malformed ${LAYOUT_FLAG} argument`);
  }
  return layout as IpcLayout;
}

type BridgeIpc = Pick<IpcRenderer, 'invoke' | 'on' | 'removeListener'>;

/** A desktop action's envelope, unwrapped: its value, or a rejection carrying the error's code and message. */
async function unwrap<T>(pending: Promise<Envelope<T>>): Promise<T> {
  const envelope = await pending;
  if (envelope.ok) return envelope.value;
  throw new Error(`${envelope.error.code}: ${envelope.error.message}`);
}

function createDesktopBridge(ipc: BridgeIpc, layout: IpcLayout): DesktopBridge {
  const calls = new Map(Object.entries(layout.calls));
  const bridge = {
    invoke(method: unknown, input: unknown): Promise<Envelope<unknown>> {
      const channel = typeof method === 'string' ? calls.get(method) : undefined;
      if (channel === undefined) {
        return Promise.resolve({
          ok: false,
          error: { code: 'invalid_input', message: `unknown method "${String(method)}"`, retryable: false, where: 'method' },
        });
      }
      return ipc.invoke(channel, input) as Promise<Envelope<unknown>>;
    },
    onEvent(listener: (event: ControlEvent) => void): () => void {
      if (typeof listener !== 'function') throw new TypeError('onEvent: the listener must be a function');
      const relay = (_event: unknown, payload: ControlEvent): void => listener(payload);
      ipc.on(layout.event, relay);
      return () => {
        ipc.removeListener(layout.event, relay);
      };
    },
    chooseManifest: (): Promise<string | null> => unwrap(ipc.invoke(layout.desktop.chooseManifest)),
    chooseExportPath: (defaultName: string): Promise<string | null> => unwrap(ipc.invoke(layout.desktop.chooseExportPath, defaultName)),
    openExternal: async (url: string): Promise<void> => {
      await unwrap(ipc.invoke(layout.desktop.openExternal, url));
    },
  };
  return Object.freeze(bridge) as DesktopBridge;
}

if (process.type === 'renderer') {
  const { contextBridge, ipcRenderer } = require('electron') as typeof import('electron');
  contextBridge.exposeInMainWorld('panoptes', createDesktopBridge(ipcRenderer, readLayout(process.argv)));
}

export = { createDesktopBridge, readLayout, LAYOUT_FLAG };
