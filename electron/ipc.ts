/**
 * The contract over Electron IPC: a transport of the ContractDispatcher. One `ipcMain.handle`
 * channel per contract method, taken from the contract's allowlist (`CONTRACT_METHODS`), each
 * handing its argument to the dispatcher (which validates it and answers an `Envelope`: IPC would
 * keep only an error's message, so errors travel as data), plus the three desktop-only actions of
 * the bridge (file dialogs, opening a link). Every handler first checks that the sender is the top
 * frame of the app's own renderer. Nothing here knows one contract method from another but the
 * export's rule below (`desktopPolicy`).
 * Pushed events go to the window on one channel. The channel names are handed to the preload as a
 * launch argument, so they are written down only here.
 * Electron objects are parameters, so this is unit-tested under Node with fakes.
 * Runs on: Electron main.
 */
import { basename, resolve } from 'node:path';
import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';
import { z } from 'zod';
import { PanoptesError, wireError } from '../core/domain.js';
import { CONTRACT_METHODS, type ControlEvent, type DesktopBridge, type Envelope, type ExportInput, type ReportHtmlInput } from '../core/service/contract.js';
import type { ContractDispatcher, TransportPolicy } from '../core/service/contract-dispatcher.js';
import { formatZodIssues } from '../core/validation.js';
import { isTrustedFrame, validateExternalUrl, type ExternalLinkPolicy } from './security.js';

/** The bridge's desktop-only actions (everything but the contract calls and events). */
export type DesktopMethod = Exclude<keyof DesktopBridge, 'invoke' | 'onEvent'>;

/** Which channel carries what; the preload receives it verbatim. */
export interface IpcLayout {
  /** Contract method -> its invoke channel. */
  calls: Record<string, string>;
  /** Where pushed `ControlEvent`s arrive. */
  event: string;
  desktop: Record<DesktopMethod, string>;
}

export const IPC_LAYOUT: IpcLayout = {
  calls: Object.fromEntries(CONTRACT_METHODS.map((method) => [method, `panoptes:call:${method}`])),
  event: 'panoptes:event',
  desktop: {
    chooseManifest: 'panoptes:desktop:chooseManifest',
    chooseExportPath: 'panoptes:desktop:chooseExportPath',
    openExternal: 'panoptes:desktop:openExternal',
  },
};

/** The launch argument (`webPreferences.additionalArguments`) that carries the layout to the preload. */
export const IPC_LAYOUT_FLAG = '--panoptes-ipc=';

export function ipcLayoutArgument(layout: IpcLayout = IPC_LAYOUT): string {
  return IPC_LAYOUT_FLAG + JSON.stringify(layout);
}

/** What only a desktop app can do, implemented by main.ts with Electron's dialog and shell. */
export interface DesktopActions {
  chooseManifest(): Promise<string | null>;
  chooseExportPath(defaultName: string): Promise<string | null>;
  openExternal(url: string): Promise<void>;
}

export interface IpcLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface IpcOptions {
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>;
  dispatcher: ContractDispatcher;
  desktop: DesktopActions;
  /** Which links may open in the system browser. */
  linkPolicy: ExternalLinkPolicy;
  logger: IpcLogger;
}

type InvokeEvent = Pick<IpcMainInvokeEvent, 'senderFrame'>;

const REFUSED: Envelope<never> = {
  ok: false,
  error: {
    code: 'auth',
    message: "refused: the request did not come from the app's own window",
    retryable: false,
    where: 'senderFrame',
  },
};

const ExportNameSchema = z.string().min(1, 'a file name').max(255, 'at most 255 characters');

/** A default file name for the save dialog: a bare name, never a path. */
export function safeFileName(raw: unknown): string {
  const parsed = ExportNameSchema.safeParse(raw);
  if (!parsed.success) {
    throw new PanoptesError('invalid_input', `chooseExportPath: ${formatZodIssues(parsed.error)}`, { where: 'defaultName' });
  }
  const name = basename(parsed.data.replaceAll('\\', '/')).replace(/[^\w.-]/g, '_');
  if (name === '' || /^\.+$/.test(name)) throw new PanoptesError('invalid_input', 'chooseExportPath: not a file name', { where: 'defaultName' });
  return name;
}


/**
 * The contract as the app's own window may call it: every method, but an export (or a saved
 * report) is written only where the user chose through this session's save dialog, so a
 * compromised page cannot make the engine overwrite arbitrary files.
 */
function desktopPolicy(chosenExportPaths: ReadonlySet<string>, logger: IpcLogger): TransportPolicy {
  return {
    name: 'desktop app',
    admit(method, input) {
      if (method === 'exportRun' && !chosenExportPaths.has(resolve((input as ExportInput).outPath))) {
        throw new PanoptesError('invalid_input', 'exportRun: choose where to save with the save dialog (chooseExportPath) first', {
          where: 'outPath',
        });
      }
      const reportPath = method === 'reportHtml' ? (input as ReportHtmlInput).outPath : undefined;
      if (reportPath !== undefined && !chosenExportPaths.has(resolve(reportPath))) {
        throw new PanoptesError('invalid_input', 'reportHtml: choose where to save with the save dialog (chooseExportPath) first', { where: 'outPath' });
      }
      return input;
    },
    onInternal: (err, method) => logger.error({ err, channel: IPC_LAYOUT.calls[method] }, 'ipc: request failed'),
  };
}

/** Registers every channel; returns a function that removes them all. */
export function registerIpc(opts: IpcOptions): () => void {
  const layout = IPC_LAYOUT;
  const channels: string[] = [];
  const chosenExportPaths = new Set<string>();
  const policy = desktopPolicy(chosenExportPaths, opts.logger);

  /** One channel: the sender check, one argument at most, and an Envelope whatever happens. */
  const serve = (channel: string, name: string, run: (arg: unknown) => Promise<Envelope<unknown>>): void => {
    channels.push(channel);
    opts.ipcMain.handle(channel, async (event: InvokeEvent, ...args: unknown[]): Promise<Envelope<unknown>> => {
      if (!isTrustedFrame(event.senderFrame)) {
        opts.logger.warn({ channel, frame: event.senderFrame?.url ?? null }, 'ipc: refused a request from an untrusted frame');
        return REFUSED;
      }
      if (args.length > 1) {
        return { ok: false, error: wireError(new PanoptesError('invalid_input', `${name}: takes one argument, got ${args.length}`, { where: name })) };
      }
      return run(args[0]);
    });
  };

  for (const method of CONTRACT_METHODS) {
    serve(layout.calls[method]!, method, (raw) => opts.dispatcher.call(method, raw, policy));
  }

  /** A desktop action, its errors in the contract's one shape. */
  const desktop = (channel: string, name: DesktopMethod, act: (arg: unknown) => Promise<unknown>): void =>
    serve(channel, name, async (arg) => {
      try {
        return { ok: true, value: await act(arg) };
      } catch (err) {
        const error = wireError(err);
        if (error.code === 'internal') opts.logger.error({ err, channel }, 'ipc: request failed');
        return { ok: false, error };
      }
    });

  desktop(layout.desktop.chooseManifest, 'chooseManifest', () => opts.desktop.chooseManifest());
  desktop(layout.desktop.chooseExportPath, 'chooseExportPath', async (raw) => {
    const path = await opts.desktop.chooseExportPath(safeFileName(raw));
    if (path !== null) chosenExportPaths.add(resolve(path));
    return path;
  });
  desktop(layout.desktop.openExternal, 'openExternal', async (raw) => {
    await opts.desktop.openExternal(validateExternalUrl(raw, opts.linkPolicy));
    return null;
  });

  return () => {
    for (const channel of channels) opts.ipcMain.removeHandler(channel);
  };
}

/** Something that publishes contract events (the ControlService). */
export interface EventSource {
  subscribe(listener: (event: ControlEvent) => void): () => void;
}

/** Pushes every event to a window until it is gone; returns the unsubscribe. */
export function forwardEvents(
  source: EventSource,
  contents: Pick<WebContents, 'send' | 'isDestroyed'>,
  channel: string = IPC_LAYOUT.event,
): () => void {
  return source.subscribe((event) => {
    if (!contents.isDestroyed()) contents.send(channel, event);
  });
}
