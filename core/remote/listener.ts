/**
 * The coordinator's worker listener: accepts `panoptes worker` connections, authenticates each
 * `register` (shared token, constant-time), and adds a RemoteWorker to the pool, from which the
 * scheduler hands it jobs. Hosts (`panoptes run --listen`, `panoptes serve --worker-port`, the
 * Electron main) start it next to their engine with `startWorkerListener(engine, options)`.
 * A connection that sends anything but a small `register` first, registers too late or with the
 * wrong token, or breaks the protocol later is closed with a logged reason; nothing a peer sends
 * can stop the listener or disturb other connections.
 * Runs on: Node (core).
 */
import type { Server, Socket } from 'node:net';
import type { Logger } from 'pino';
import { GuestSockets, connectionCaps } from '../concurrency/guest-sockets.js';
import { PanoptesError, type ErrorCode } from '../domain.js';
import { componentLogger, logger as rootLogger } from '../telemetry.js';
import { maxResponseBytes } from '../workers/answer-bounds.js';
import type { WorkerPool } from '../workers/worker-pool.js';
import { tokenCheck } from '../token-check.js';
import { DEFAULT_HEARTBEAT_MS, DEFAULT_MISSED_HEARTBEATS } from './heartbeat.js';
import { MessageStream } from './message-stream.js';
import {
  DEFAULT_MAX_FRAME_BYTES,
  PRE_REGISTER_MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  RegisterSchema,
  WorkerMessageSchema,
  type RegisterMessage,
  type WorkerMessage,
} from './messages.js';
import type { ConnectionCallsFactory } from './call-counting.js';
import { RemoteWorker } from './remote-worker.js';
import { createTransportServer, type ServerTls } from './transport.js';

export interface WorkerListenerOptions {
  /** TCP port (0: any free port; read it back from `port`). */
  port: number;
  /** Address to bind (default 127.0.0.1: only this machine; `0.0.0.0` for every interface). */
  host?: string | undefined;
  /** The shared secret every worker must present. */
  token: string;
  /** Serve TLS with this certificate and key. */
  tls?: ServerTls | undefined;
  /** Heartbeat interval (default 2 s). */
  heartbeatMs?: number | undefined;
  /** Silent intervals after which a worker is dead (default 3). */
  missedHeartbeats?: number | undefined;
  /** How long a new connection has to register (default 5 s). */
  registerTimeoutMs?: number | undefined;
  /** Largest frame once registered (default 8 MiB). */
  maxFrameBytes?: number | undefined;
  /** Response text a record may carry, in bytes (default: PANOPTES_MAX_RESPONSE_BYTES, else 4 MiB). */
  maxResponseBytes?: number | undefined;
  /** Open connections at most (default 5,120, less when the open-file limit is low). */
  maxConnections?: number | undefined;
  /**
   * Connections that have not registered yet (default 4,096, less when the open-file limit is
   * low); past it the one that has waited longest is closed.
   */
  maxGuestConnections?: number | undefined;
  logger?: Logger | undefined;
}

export interface WorkerListener {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** Stops accepting and closes every connection (their jobs fail over like any lost worker's). */
  close(): Promise<void>;
}

/** Starts accepting workers into `engine.pool`, counting their billed calls with `engine.remoteCalls`; resolves once listening. */
export async function startWorkerListener(engine: { pool: WorkerPool; remoteCalls: ConnectionCallsFactory }, opts: WorkerListenerOptions): Promise<WorkerListener> {
  if (!opts.token) {
    throw new PanoptesError('invalid_input', 'a worker token is required to accept remote workers', { where: 'token' });
  }
  const pool = engine.pool;
  const logger = componentLogger(opts.logger ?? rootLogger(), 'worker-listener');
  const tokenMatches = tokenCheck(opts.token);
  const heartbeatMs = opts.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const missedHeartbeats = opts.missedHeartbeats ?? DEFAULT_MISSED_HEARTBEATS;
  const registerTimeoutMs = opts.registerTimeoutMs ?? 5000;
  const maxFrameBytes = opts.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const responseLimit = opts.maxResponseBytes ?? maxResponseBytes();
  const sockets = new Set<Socket>();
  const caps = connectionCaps();
  const guests = new GuestSockets(opts.maxGuestConnections ?? caps.guests);

  const accept = (socket: Socket) => {
    sockets.add(socket);
    guests.admit(socket);
    const address = `${socket.remoteAddress}:${socket.remotePort}`;
    let worker: RemoteWorker | null = null;
    const stream: MessageStream<RegisterMessage | WorkerMessage> = new MessageStream<RegisterMessage | WorkerMessage>(socket, {
      schema: RegisterSchema,
      maxFrameBytes: PRE_REGISTER_MAX_FRAME_BYTES,
      onMessage: (message) => {
        if (worker) return worker.handle(message as WorkerMessage);
        register(message as RegisterMessage);
      },
      onClose: (reason) => {
        clearTimeout(registerTimer);
        sockets.delete(socket);
        if (worker) worker.lose(reason);
        else logger.warn({ address, reason }, 'connection closed before registering');
      },
    });
    const registerTimer = setTimeout(() => stream.close(`no register within ${registerTimeoutMs} ms`), registerTimeoutMs);
    registerTimer.unref();

    const refuse = (code: ErrorCode, message: string) => stream.close(`refused: ${message}`, { type: 'error', code, message });

    const register = (reg: RegisterMessage) => {
      clearTimeout(registerTimer);
      if (!tokenMatches(reg.token)) return refuse('auth', 'invalid worker token');
      if (reg.protocol !== PROTOCOL_VERSION) {
        return refuse('bad_request', `protocol ${reg.protocol} is not supported (this coordinator speaks ${PROTOCOL_VERSION})`);
      }
      const existing = pool.handles().find((h) => h.id === reg.worker_id);
      if (existing && !(existing instanceof RemoteWorker)) return refuse('conflict', `worker id "${reg.worker_id}" is taken`);
      // A worker that reconnects before its old connection was found dead replaces it.
      existing?.lose('superseded by a new connection with the same worker id');
      const registered = new RemoteWorker({
        registration: reg,
        stream,
        address,
        heartbeatMs,
        missedHeartbeats,
        maxResponseBytes: responseLimit,
        logger,
        calls: engine.remoteCalls,
        onGone: (w) => {
          if (pool.handles().includes(w)) pool.remove(w.id);
        },
        onProgress: () => pool.notify(),
      });
      worker = registered;
      guests.release(socket);
      stream.schema = WorkerMessageSchema;
      stream.maxFrameBytes = maxFrameBytes;
      stream.send({
        type: 'registered',
        worker_id: reg.worker_id,
        heartbeat_ms: heartbeatMs,
        missed_heartbeats: missedHeartbeats,
        max_frame_bytes: maxFrameBytes,
      });
      pool.add(registered);
      logger.info({ worker: reg.worker_id, address, capacity: reg.capacity, models: reg.models, version: reg.version }, 'worker registered');
    };
  };

  const server: Server = createTransportServer(accept, {
    ...(opts.tls ? { tls: opts.tls } : {}),
    handshakeTimeoutMs: registerTimeoutMs,
    onTlsError: (err, socket) => {
      logger.warn({ address: `${socket.remoteAddress}:${socket.remotePort}`, reason: err.message }, 'TLS handshake refused');
      socket.destroy();
    },
  });
  server.maxConnections = opts.maxConnections ?? caps.total;
  server.on('error', (err) => logger.error({ err }, 'worker listener error'));

  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) =>
      reject(new PanoptesError('invalid_input', `cannot listen for workers on ${host}:${opts.port}: ${err.code ?? err.message}`, { where: 'port' }));
    server.once('error', onError);
    server.listen(opts.port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const port = (server.address() as { port: number }).port;
  logger.info({ host, port, tls: Boolean(opts.tls) }, 'listening for workers');

  return {
    host,
    port,
    tls: Boolean(opts.tls),
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const h of pool.handles()) if (h instanceof RemoteWorker) h.lose('coordinator stopped listening');
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
