/**
 * One contract, three transports: every contract method is reached through the ContractDispatcher
 * over Electron's IPC and over the browser bridge, and the HTTP API's routes map onto the same
 * methods; an invalid input gets the very same error body over each, with the same status over
 * both HTTP paths. A real engine on real SQLite, the real server on 127.0.0.1 port 0, IPC through
 * a recording ipcMain (Electron's own needs a display).
 * Runs on: Node (tests).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IpcMain } from 'electron';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserBridge, bridgeSources } from '../../core/http/bridge.js';
import { ManifestRoots } from '../../core/http/manifest-roots.js';
import { REST_ROUTES } from '../../core/http/routes.js';
import { CONTRACT_METHODS, type ControlMethod, type Envelope } from '../../core/service/contract.js';
import { initTelemetry } from '../../core/telemetry.js';
import { IPC_LAYOUT, registerIpc } from '../../electron/ipc.js';
import { APP_ENTRY_URL } from '../../electron/security.js';
import { writeManifest } from '../helpers/temp.js';
import { TOKEN, startApi, type ApiHarness } from './harness.js';

initTelemetry({ defaultLevel: 'silent' });

type Handler = (event: { senderFrame: { url: string; parent: null } }, ...args: unknown[]) => Promise<Envelope<unknown>>;

/** An input no method's schema accepts: every contract input is a strict object (or nothing). */
const NOT_AN_INPUT = { notAField: 1 };

/** The contract methods that answer without a run or a listener to act on. */
const READS: ControlMethod[] = ['listRuns', 'stats', 'catalog', 'workers', 'defaults', 'metrics', 'posture', 'roster', 'workerListener'];

describe('one contract over IPC, the browser bridge and the HTTP API', () => {
  let api: ApiHarness;
  const handlers = new Map<string, Handler>();

  const viaIpc = (method: string, input?: unknown): Promise<Envelope<unknown>> =>
    handlers.get(IPC_LAYOUT.calls[method]!)!({ senderFrame: { url: APP_ENTRY_URL, parent: null } }, ...(input === undefined ? [] : [input]));
  const viaBridge = (method: string, input?: unknown) => api.call('POST', `/bridge/call/${method}`, { body: input ?? {} });

  beforeAll(async () => {
    api = await startApi({
      startScheduler: false,
      async addons(app, { engine, dir, dataDir }) {
        const rendererDir = join(dir, 'renderer');
        mkdirSync(rendererDir);
        writeFileSync(join(rendererDir, 'index.html'), '<!doctype html>');
        await app.register(browserBridge, {
          ...bridgeSources(engine),
          token: TOKEN,
         
          manifestRoots: ManifestRoots.of(dataDir, [dir]),
          rendererDir,
        });
      },
    });
    registerIpc({
      ipcMain: { handle: (channel: string, h: Handler) => handlers.set(channel, h), removeHandler: (c: string) => handlers.delete(c) } as unknown as IpcMain,
      dispatcher: api.engine.dispatcher,
      desktop: { chooseManifest: async () => null, chooseExportPath: async () => null, openExternal: async () => {} },
      linkPolicy: { allowHttp: false },
      logger: { warn: () => {}, error: () => {} },
    });
  });
  afterAll(async () => {
    await api.close();
  });

  it.each(CONTRACT_METHODS)('%s: the dispatcher validates it once, and IPC and the bridge answer the same error', async (method) => {
    const ipc = await viaIpc(method, NOT_AN_INPUT);
    expect(ipc).toMatchObject({ ok: false, error: { code: 'invalid_input', retryable: false } });
    if (ipc.ok) throw new Error('accepted');
    expect(ipc.error.message).toMatch(new RegExp(`^${method}: `));
    const bridge = await viaBridge(method, NOT_AN_INPUT);
    if (method === 'exportRun') {
      // A browser downloads instead: the bridge does not carry the one method that writes files on the server's disk.
      expect(bridge.status).toBe(404);
      expect(bridge.json).toEqual({ ok: false, error: { code: 'not_found', message: 'no method "exportRun" on the browser bridge', retryable: false, where: 'method' } });
      return;
    }
    expect(bridge.status).toBe(400);
    expect(bridge.json).toEqual(ipc);
  });

  it.each(READS)('%s: IPC and the bridge reach the same method and get the same value', async (method) => {
    const ipc = await viaIpc(method);
    expect(ipc.ok).toBe(true);
    const bridge = await viaBridge(method);
    expect(bridge.status).toBe(200);
    // Uptimes and "last seen" times move between two calls; the shape and the rest do not.
    expect(JSON.stringify(bridge.json).replace(/\d{13}/g, 'T')).toBe(JSON.stringify(ipc).replace(/\d{13}/g, 'T'));
  });

  it('maps every REST route onto a contract method, and an invalid input gets the bridge\'s error body and status', async () => {
    expect(REST_ROUTES.every((r) => CONTRACT_METHODS.includes(r.call))).toBe(true);
    const manifest = writeManifest(api.dir, 2);
    const pairs: Array<{ rest: [string, string, unknown?]; bridge: [ControlMethod, unknown] }> = [
      { rest: ['GET', '/runs?limit=0'], bridge: ['listRuns', { limit: 0 }] },
      { rest: ['GET', '/runs/nope'], bridge: ['getRun', { runId: 'nope' }] },
      { rest: ['POST', '/runs', { manifest, models: ['fast'], epochs: 0 }], bridge: ['createRun', { manifestPath: manifest, models: ['fast'], epochs: 0 }] },
      { rest: ['POST', '/runs', { manifest, models: ['nope'], epochs: 1 }], bridge: ['createRun', { manifestPath: manifest, models: ['nope'], epochs: 1 }] },
      { rest: ['GET', '/runs/nope/responses?epoch=0'], bridge: ['responses', { runId: 'nope', epoch: 0 }] },
      { rest: ['GET', '/metrics?limit=5000'], bridge: ['metrics', { limit: 5000 }] },
      { rest: ['POST', '/probe', { models: [] }], bridge: ['probe', { models: [] }] },
    ];
    for (const { rest, bridge } of pairs) {
      const [verb, path, body] = rest;
      const viaRest = await api.call(verb, path, body === undefined ? {} : { body });
      const viaBridgeCall = await viaBridge(...bridge);
      expect(viaRest.json, path).toMatchObject({ ok: false });
      expect(viaRest.json, path).toEqual(viaBridgeCall.json);
      expect(viaRest.status, path).toBe(viaBridgeCall.status);
    }
  });

  it('names a renamed body field as the request did, a refused whole part by its part, and refuses a field given twice', async () => {
    const missing = await api.call('POST', '/runs', { body: { models: ['fast'], epochs: 1 } });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatchObject({ code: 'invalid_input', where: 'manifest' });
    expect(missing.json.error.message).not.toMatch(/manifestPath/);
    const extra = await api.call('GET', '/runs?surprise=1');
    expect(extra.json.error).toMatchObject({ code: 'invalid_input', where: 'query' });
    expect(extra.json.error.message).toMatch(/surprise/);
    const twice = await api.call('GET', '/runs/one/responses?runId=other');
    expect(twice.status).toBe(400);
    expect(twice.json).toEqual({ ok: false, error: { code: 'invalid_input', message: 'query: runId is given by the path (:id)', retryable: false, where: 'runId' } });
  });
});
