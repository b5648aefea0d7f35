/**
 * The client over Electron's IPC: everything goes through `window.panoptes`, the DesktopBridge the
 * preload exposes (one invoke channel per contract method, pushed events, native dialogs). IPC has
 * no connection to lose, so the event stream is always open.
 * Runs on: renderer (inside Electron).
 */
import { exportFileName, unwrap, type CallArgs, type PanoptesClient } from './client.js';
import type { ControlMethod, DesktopBridge, MethodInput, MethodResult } from './types.js';

declare global {
  interface Window {
    /** Present only inside the desktop app (Electron's preload). */
    panoptes?: DesktopBridge;
  }
}

export function createIpcClient(bridge: DesktopBridge): PanoptesClient {
  const client: PanoptesClient = {
    kind: 'desktop',
    async call<M extends ControlMethod>(method: M, ...args: CallArgs<M>): Promise<MethodResult<M>> {
      return unwrap(await bridge.invoke(method, args[0] as MethodInput<M>));
    },
    onEvent: (listener) => bridge.onEvent(listener),
    onConnection(listener) {
      listener('open');
      return () => {};
    },
    chooseManifest: () => bridge.chooseManifest(),
    uploadManifest: null,
    async exportRun(runId, format, opts) {
      const outPath = await bridge.chooseExportPath(exportFileName(runId, format));
      if (outPath === null) return null;
      const result = await client.call('exportRun', { runId, format, outPath, ...(opts?.scores ? { scores: true } : {}) });
      return { kind: 'saved', path: result.path, lines: result.lines };
    },
    async saveReport(input) {
      const outPath = await bridge.chooseExportPath(`${input.runId}-report.html`);
      if (outPath === null) return null;
      const result = await client.call('reportHtml', { ...input, outPath });
      return { kind: 'saved', path: result.path ?? outPath, rows: result.rows, total: result.total };
    },
  };
  return client;
}
