/**
 * Test harness for remote workers: a coordinator in this process (a real engine over a temp SQLite
 * file, a real listener on 127.0.0.1 port 0), real `panoptes worker` processes spawned from the
 * built CLI, a raw protocol peer for speaking (and mis-speaking) frames by hand, and a logger that
 * tallies what the coordinator logged.
 * Runs on: Node (tests).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join, resolve } from 'node:path';
import { pino, type Logger } from 'pino';
import type { CatalogData } from '../../core/models/catalog.js';
import { startWorkerListener, type WorkerListener, type WorkerListenerOptions } from '../../core/remote/listener.js';
import { PROTOCOL_VERSION } from '../../core/remote/messages.js';
import { openEngine, type Engine } from '../../core/service/engine.js';
import { BIN } from '../helpers/cli.js';
import { tempDir, writeManifest, writeMockCatalog } from '../helpers/temp.js';

export const TOKEN = 'test-token-6f1c2a';

export function assertBuilt(): void {
  if (!existsSync(resolve('dist/cli/main.cjs'))) {
    throw new Error('the command line is not built (dist/cli/): run `npm run build` before these tests');
  }
}

export async function waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

/** A pino logger whose lines are tallied by message and (digit-free) reason, in bounded memory. */
export function tallyLogger(level = 'info'): { logger: Logger; tally: Map<string, number>; count(pattern: RegExp): number } {
  const tally = new Map<string, number>();
  const logger = pino(
    { level },
    {
      write(line: string) {
        const o = JSON.parse(line) as { msg?: string; reason?: string };
        const key = `${o.msg ?? ''}${o.reason ? ` | ${o.reason.replace(/\d+/g, 'N').slice(0, 300)}` : ''}`;
        tally.set(key, (tally.get(key) ?? 0) + 1);
      },
    },
  );
  const count = (pattern: RegExp) => [...tally].reduce((n, [k, v]) => (pattern.test(k) ? n + v : n), 0);
  return { logger, tally, count };
}

export interface Coordinator {
  engine: Engine;
  listener: WorkerListener;
  dir: string;
  dataDir: string;
  catalogPath: string;
  manifest(count: number, name?: string): string;
  close(): Promise<void>;
}

export interface CoordinatorOptions {
  /** Mock models: id -> mock options (latencyMs, jitterMs, ...). */
  models: Record<string, Record<string, unknown>>;
  /** A whole catalog instead (e.g. hosts on a local HTTP server); `models` is then ignored. */
  catalog?: CatalogData;
  maxAttempts?: number;
  waitForWorkerMs?: number;
  /** The runs' lease (a run left `running` by a stopped coordinator is taken up again once it lapses). */
  leaseMs?: number;
  listener?: Partial<WorkerListenerOptions>;
  logger?: Logger;
  /** Reuse a directory (a restarted coordinator). */
  dir?: string;
}

/** An engine with no local worker, and a worker listener in front of its pool. */
export async function startCoordinator(opts: CoordinatorOptions): Promise<Coordinator> {
  const temp = opts.dir === undefined ? tempDir('panoptes-remote-') : { dir: opts.dir, cleanup: () => {} };
  const dataDir = join(temp.dir, 'data');
  const catalogPath = opts.catalog ? join(temp.dir, 'catalog.json') : writeMockCatalog(temp.dir, opts.models);
  if (opts.catalog) writeFileSync(catalogPath, JSON.stringify(opts.catalog));
  const logger = opts.logger ?? tallyLogger('warn').logger;
  const engine = openEngine({
    dataDir,
    catalogPaths: [catalogPath],
    local: false,
    maxAttempts: opts.maxAttempts ?? 3,
    waitForWorkerMs: opts.waitForWorkerMs ?? 20_000,
    tickMs: 50,
    ...(opts.leaseMs === undefined ? {} : { leaseMs: opts.leaseMs }),
    logger,
  });
  const listener = await startWorkerListener(engine, { port: 0, token: TOKEN, logger, ...opts.listener });
  return {
    engine,
    listener,
    dir: temp.dir,
    dataDir,
    catalogPath,
    manifest: (count, name) => writeManifest(temp.dir, count, name),
    async close() {
      await engine.close();
      await listener.close();
      if (opts.dir === undefined) temp.cleanup();
    },
  };
}

export interface WorkerProcess {
  id: string;
  child: ChildProcessWithoutNullStreams;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

export interface WorkerSpawnOptions {
  id: string;
  catalogPath: string;
  port: number;
  token?: string;
  capacity?: number;
  callConcurrency?: number;
  models?: string;
  extraArgs?: string[];
}

/** Spawns `node bin/panoptes.cjs worker` against a coordinator. */
export function spawnWorker(o: WorkerSpawnOptions): WorkerProcess {
  const args = [
    BIN, 'worker',
    '--connect', `127.0.0.1:${o.port}`,
    '--catalog', o.catalogPath,
    '--data-dir', join(o.catalogPath, '..', `worker-${o.id}`),
    '--id', o.id,
    '--capacity', String(o.capacity ?? 2),
    '--call-concurrency', String(o.callConcurrency ?? 4),
    ...(o.models ? ['--models', o.models] : []),
    ...(o.extraArgs ?? []),
  ];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, PANOPTES_LOG: 'info', PANOPTES_WORKER_TOKEN: o.token ?? TOKEN },
  });
  let stderr = '';
  child.stdout.resume();
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (stderr.length > 200_000) stderr = stderr.slice(-100_000);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.on('exit', (code, signal) => res({ code, signal })),
  );
  return { id: o.id, child, exited, stderr: () => stderr };
}

export async function stopWorkers(workers: Iterable<WorkerProcess>): Promise<void> {
  const all = [...workers];
  for (const w of all) {
    if (w.child.exitCode === null && w.child.signalCode === null) {
      w.child.kill('SIGCONT');
      w.child.kill('SIGKILL');
    }
  }
  await Promise.all(all.map((w) => w.exited));
}

/** Encodes one frame: 4-byte big-endian length, then the bytes. */
export function frame(body: object | string | Buffer): Buffer {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
  const header = Buffer.alloc(4);
  header.writeUInt32BE(bytes.length, 0);
  return Buffer.concat([header, bytes]);
}

export function registerFrame(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'register', protocol: PROTOCOL_VERSION, worker_id: 'raw-peer', capacity: 1, models: ['no-such-model'], token: TOKEN, version: 'test', ...overrides };
}

/** A hand-driven protocol peer: collects every frame the coordinator sends and when it closed. */
export class RawPeer {
  readonly socket: net.Socket;
  readonly frames: Array<{ type: string } & Record<string, unknown>> = [];
  readonly closed: Promise<number>;
  private readonly openedAt = Date.now();
  private buf = Buffer.alloc(0);

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      while (this.buf.length >= 4 && this.buf.length >= 4 + this.buf.readUInt32BE(0)) {
        const n = this.buf.readUInt32BE(0);
        this.frames.push(JSON.parse(this.buf.subarray(4, 4 + n).toString('utf8')) as { type: string });
        this.buf = this.buf.subarray(4 + n);
      }
    });
    socket.on('error', () => {});
    this.closed = new Promise((res) => socket.on('close', () => res(Date.now() - this.openedAt)));
  }

  static connect(port: number): Promise<RawPeer> {
    return new Promise((res, rej) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => res(new RawPeer(s)));
      s.once('error', rej);
    });
  }

  send(body: object): void {
    this.socket.write(frame(body));
  }

  types(): string[] {
    return this.frames.map((f) => f.type);
  }

  isClosed(): boolean {
    return this.socket.destroyed || this.socket.readyState === 'closed';
  }
}
