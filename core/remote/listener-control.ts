/**
 * The worker listener as an app turns it on and off: `WorkerListenerControl` starts and stops the
 * TCP listener for `panoptes worker` processes at an address the user picks (127.0.0.1 unless told
 * otherwise), makes the shared token the first time and keeps it with a `WorkerTokenKeeper` (the
 * desktop app's is the OS keychain; the browser app's a file readable only by its owner), and says
 * the exact `panoptes worker --connect HOST:PORT --token ...` command a worker machine runs. The
 * Electron main process, `panoptes desktop` and `serve --ui` all run this same code, through the
 * contract's `workerListener`, `startWorkerListener` and `stopWorkerListener`.
 * Runs on: Node (core).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import type { Logger } from 'pino';
import { writeFileAtomicSync } from '../atomic-write.js';
import { PanoptesError, toPanoptesError } from '../domain.js';
import type { WorkerPool } from '../workers/worker-pool.js';
import type { ConnectionCallsFactory } from './call-counting.js';
import { startWorkerListener, type WorkerListener, type WorkerListenerOptions } from './listener.js';

/** The variable a token in the environment is read from (it wins over a kept one). */
export const WORKER_TOKEN_ENV = 'PANOPTES_WORKER_TOKEN';

/** The port the listener takes unless the user picks another. */
export const DEFAULT_LISTENER_PORT = 7878;

/** Where the worker token lives between launches. */
export interface WorkerTokenKeeper {
  /** Where it is kept, in words a user can act on (shown in the Workers view). */
  readonly where: string;
  /** The kept token, or null when none was made yet. */
  load(): string | null;
  save(token: string): void;
}

/** The listener's state as the Workers view shows it. */
export interface WorkerListenerStatus {
  listening: boolean;
  /** The address bound (127.0.0.1, 0.0.0.0, ...), when listening. */
  host: string | null;
  port: number | null;
  /** The exact command a worker machine runs to connect, when listening. */
  command: string | null;
  /** Where the token is kept (the OS keychain, a file, or the environment). */
  tokenKeptIn: string;
  /** Why the last start failed, or null. */
  error: string | null;
}

export interface WorkerListenerControlOptions {
  pool: WorkerPool;
  /** How the workers' billed calls are counted in the run's ledger. */
  remoteCalls: ConnectionCallsFactory;
  keeper: WorkerTokenKeeper;
  logger?: Logger;
  /** Where a token set in the environment is read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Listener settings other than the address and the token (heartbeats, limits; tests shorten them). */
  listener?: Omit<WorkerListenerOptions, 'host' | 'port' | 'token' | 'logger'>;
}

/** A token file readable and writable by its owner only, replaced atomically. */
export class FileTokenKeeper implements WorkerTokenKeeper {
  readonly where: string;

  constructor(private readonly file: string) {
    this.where = `${file} (readable by this user only)`;
  }

  load(): string | null {
    if (!existsSync(this.file)) return null;
    const token = readFileSync(this.file, 'utf8').trim();
    return token === '' ? null : token;
  }

  save(token: string): void {
    writeFileAtomicSync(this.file, `${token}\n`, 0o600);
  }
}

export class WorkerListenerControl {
  private listener: WorkerListener | null = null;
  private lastError: string | null = null;
  /** Start and stop run one at a time, so two clicks cannot open two listeners. */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly env: NodeJS.ProcessEnv;

  constructor(private readonly opts: WorkerListenerControlOptions) {
    this.env = opts.env ?? process.env;
  }

  status(): WorkerListenerStatus {
    const l = this.listener;
    return {
      listening: l !== null,
      host: l?.host ?? null,
      port: l?.port ?? null,
      command: l ? workerCommand(connectHost(l.host), l.port, this.token(), l.tls) : null,
      tokenKeptIn: this.env[WORKER_TOKEN_ENV] ? `the environment variable ${WORKER_TOKEN_ENV}` : this.opts.keeper.where,
      error: this.lastError,
    };
  }

  /** Listens at `host:port` (replacing a listener at another address); a failure is kept in the status and thrown. */
  start(address: { host?: string | undefined; port?: number | undefined } = {}): Promise<WorkerListenerStatus> {
    return this.serially(async () => {
      const host = address.host ?? '127.0.0.1';
      const port = address.port ?? DEFAULT_LISTENER_PORT;
      if (this.listener && this.listener.host === host && (port === 0 || this.listener.port === port)) return this.status();
      await this.closeListener();
      try {
        this.listener = await startWorkerListener(
          { pool: this.opts.pool, remoteCalls: this.opts.remoteCalls },
          { ...this.opts.listener, host, port, token: this.token(), ...(this.opts.logger ? { logger: this.opts.logger } : {}) },
        );
        this.lastError = null;
      } catch (err) {
        const e = toPanoptesError(err);
        this.lastError = e.message;
        throw e;
      }
      return this.status();
    });
  }

  /** Stops accepting workers; connected ones are let go (their jobs move to other workers). */
  stop(): Promise<WorkerListenerStatus> {
    return this.serially(async () => {
      await this.closeListener();
      return this.status();
    });
  }

  async close(): Promise<void> {
    await this.stop();
  }

  /** The token: the environment's, else the kept one, else a new one that is kept from now on. */
  private token(): string {
    const fromEnv = this.env[WORKER_TOKEN_ENV];
    if (fromEnv) return fromEnv;
    const kept = this.opts.keeper.load();
    if (kept) return kept;
    const made = randomBytes(24).toString('base64url');
    try {
      this.opts.keeper.save(made);
    } catch (err) {
      throw new PanoptesError('auth', `the worker token could not be kept in ${this.opts.keeper.where}: ${toPanoptesError(err).message}`, {
        cause: err,
      });
    }
    return made;
  }

  private async closeListener(): Promise<void> {
    const l = this.listener;
    this.listener = null;
    await l?.close();
  }

  private serially<T>(step: () => Promise<T>): Promise<T> {
    const next = this.queue.then(step, step);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/**
 * The address a worker on another machine dials: the bound one, unless it is every interface
 * (0.0.0.0, ::), when it is this machine's first external IPv4 address, else its host name.
 */
export function connectHost(bound: string): string {
  if (bound !== '0.0.0.0' && bound !== '::') return bound;
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return hostname();
}

/** The command line a worker machine runs (an IPv6 address in brackets, as `--connect` expects). */
export function workerCommand(host: string, port: number, token: string, tls: boolean): string {
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return `panoptes worker --connect ${hostPart}:${port} --token ${token}${tls ? ' --tls' : ''}`;
}
