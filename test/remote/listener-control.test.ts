/**
 * The worker listener as the app turns it on: through the contract (`startWorkerListener`, the
 * call the Workers view and the Electron main process make), with a real engine over SQLite and a
 * real `panoptes worker` child process that runs the exact command the status shows. The token is
 * made once, kept owner-only, and the same after a restart; a worker appears in the pool and runs
 * a sweep; stopping lets it go; a busy port, a bad address and a keeper that cannot keep are
 * refused with a clear error and leave nothing listening.
 */
import { statSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PanoptesError } from '../../core/domain.js';
import { connectHost, WorkerListenerControl, workerCommand, type WorkerTokenKeeper } from '../../core/remote/listener-control.js';
import { openEngine, type Engine, type EngineOptions } from '../../core/service/engine.js';
import { WorkerPool } from '../../core/workers/worker-pool.js';
import { tempDir, writeManifest, writeMockCatalog } from '../helpers/temp.js';
import { assertBuilt, spawnWorker, stopWorkers, tallyLogger, waitFor, type WorkerProcess } from './harness.js';

let engine: Engine | undefined;
let tmp: ReturnType<typeof tempDir>;
const workers: WorkerProcess[] = [];

beforeAll(() => assertBuilt());
afterEach(async () => {
  await stopWorkers(workers.splice(0));
  await engine?.close();
  engine = undefined;
  tmp.cleanup();
});

function open(extra: Partial<EngineOptions> = {}): { engine: Engine; catalogPath: string; dataDir: string } {
  tmp = tempDir('panoptes-listener-');
  const catalogPath = writeMockCatalog(tmp.dir, { quick: { latencyMs: 1 } });
  const dataDir = join(tmp.dir, 'data');
  engine = openEngine({
    dataDir,
    catalogPaths: [catalogPath],
    local: false,
    waitForWorkerMs: 20_000,
    tickMs: 50,
    logger: tallyLogger('warn').logger,
    ...extra,
  });
  return { engine, catalogPath, dataDir };
}

/** `--connect HOST:PORT --token T` from the command the status shows. */
function parseCommand(command: string): { port: number; token: string } {
  const m = /^panoptes worker --connect 127\.0\.0\.1:(\d+) --token (\S+)$/.exec(command);
  if (!m) throw new Error(`unexpected command: ${command}`);
  return { port: Number(m[1]), token: m[2]! };
}

describe('the worker listener, started from the app', () => {
  it('starts on 127.0.0.1, shows the command, and a real worker that runs it takes a sweep', async () => {
    const { engine: e, catalogPath, dataDir } = open();
    expect(await e.service.workerListener()).toMatchObject({ listening: false, command: null, error: null });
    const status = await e.service.startWorkerListener({ port: 0 });
    expect(status).toMatchObject({ listening: true, host: '127.0.0.1', error: null });
    expect(status.tokenKeptIn).toContain(join(dataDir, 'worker-token'));
    const { port, token } = parseCommand(status.command!);
    expect(port).toBe(status.port);
    expect(token).toMatch(/^[\w-]{32}$/);
    if (process.platform !== 'win32') expect(statSync(join(dataDir, 'worker-token')).mode & 0o777).toBe(0o600);

    workers.push(spawnWorker({ id: 'w-app', catalogPath, port, token }));
    await waitFor(() => e.pool.list().some((w) => w.id === 'w-app' && w.alive), 20_000, 'the worker to register');
    const run = await e.service.createRun({ manifestPath: writeManifest(tmp.dir, 5), models: ['quick'], epochs: 2 });
    e.scheduler.start();
    await waitFor(() => e.store.queries.getRun(run.id)?.status === 'done', 30_000, 'the run to finish on the remote worker');
    const page = await e.service.responses({ runId: run.id });
    expect(page.items).toHaveLength(10);
    expect(e.store.queries.jobs(run.id).every((j) => j.status === 'done')).toBe(true);

    // Stopping lets the worker go; starting again keeps the same token.
    expect(await e.service.stopWorkerListener()).toMatchObject({ listening: false, command: null });
    await waitFor(() => !e.pool.list().some((w) => w.id === 'w-app'), 10_000, 'the worker to leave the pool');
    const again = await e.service.startWorkerListener({ port: 0 });
    expect(parseCommand(again.command!).token).toBe(token);
  });

  it('refuses a bad address, names a busy port, and keeps nothing listening', async () => {
    const { engine: e } = open();
    await expect(e.service.startWorkerListener({ host: 'a b; rm -rf', port: 1 })).rejects.toMatchObject({ code: 'invalid_input', where: 'host' });
    await expect(e.service.startWorkerListener({ port: 70_000 })).rejects.toMatchObject({ code: 'invalid_input', where: 'port' });
    await expect(e.service.startWorkerListener({ port: 1, extra: true } as never)).rejects.toThrow(/extra/);

    const busy = net.createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
    const taken = (busy.address() as net.AddressInfo).port;
    try {
      const err = await e.service.startWorkerListener({ port: taken }).catch((x: unknown) => x);
      expect(err).toBeInstanceOf(PanoptesError);
      expect((err as PanoptesError).message).toContain(`127.0.0.1:${taken}: EADDRINUSE`);
      expect(await e.service.workerListener()).toMatchObject({ listening: false, error: expect.stringContaining('EADDRINUSE') });
    } finally {
      busy.close();
    }
    // Two clicks at once open one listener.
    const [a, b] = await Promise.all([e.service.startWorkerListener({ port: 0 }), e.service.startWorkerListener({ port: 0 })]);
    expect(b.port).toBe(a.port);
    expect((await e.service.workerListener()).error).toBeNull();
  });

  it('says where the token is kept, uses the environment\'s when set, and refuses when the keeper cannot keep one', async () => {
    const failing: WorkerTokenKeeper = {
      where: 'the OS keychain',
      load: () => null,
      save: () => {
        throw new Error('no keyring is running');
      },
    };
    const { engine: e } = open({ workerTokenKeeper: failing });
    const err = await e.service.startWorkerListener({ port: 0 }).catch((x: unknown) => x);
    expect((err as Error).message).toBe('the worker token could not be kept in the OS keychain: no keyring is running');
    expect(await e.service.workerListener()).toMatchObject({ listening: false, tokenKeptIn: 'the OS keychain' });

    const fromEnv = new WorkerListenerControl({ pool: new WorkerPool(), remoteCalls: e.remoteCalls, keeper: failing, env: { PANOPTES_WORKER_TOKEN: 'token-from-env' } });
    try {
      const status = await fromEnv.start({ port: 0 });
      expect(status.command).toBe(`panoptes worker --connect 127.0.0.1:${status.port} --token token-from-env`);
      expect(status.tokenKeptIn).toBe('the environment variable PANOPTES_WORKER_TOKEN');
    } finally {
      await fromEnv.close();
    }
  });

  it('shows an address a remote machine can dial when bound to every interface', () => {
    expect(connectHost('127.0.0.1')).toBe('127.0.0.1');
    expect(connectHost('0.0.0.0')).not.toBe('0.0.0.0');
    expect(workerCommand('::1', 7878, 'tok', false)).toBe('panoptes worker --connect [::1]:7878 --token tok');
  });
});
