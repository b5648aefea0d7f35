/**
 * The coordinator as a service: `createHttpServer` assembles the HTTP API on Fastify over an open
 * engine. Limits and hooks live here, in one place, in the order a request meets them:
 *   socket    connection cap, a cap of its own for connections yet to authenticate (the longest
 *             waiting is closed past it), header timeout (slowloris), request and keep-alive timeouts
 *   onRequest Host/Origin guard (403) -> concurrent-request cap (503) -> bearer token (401, API routes)
 *   body      size cap (413); POST /runs: the queued-run cap (429)
 *   handler   one contract call through the ContractDispatcher (routes.ts maps the request onto
 *             it), which validates the input once (400 naming the field); engine errors map to
 *             400/404/409. A manifest is read only from the folders ManifestRoots allows
 *   done      one log line per request: method, path, status, latency (and run_id on run routes)
 * The instance is returned before it listens, so a host (`panoptes serve`, the desktop app) can
 * register more plugins on it first — the browser bridge reuses `hostOriginGuard` (applied to
 * every route already) and `bearerAuth`/`createTokenCheck` from ./auth.js.
 * Runs on: Node (core).
 */
import type { Socket } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { GuestSockets } from '../concurrency/guest-sockets.js';
import { packageVersion } from '../paths.js';
import type { Engine } from '../service/engine.js';
import { componentLogger, logger as rootLogger } from '../telemetry.js';
import { createTokenCheck } from './auth.js';
import { concurrentRequestLimit, queuedRunLimit } from './backpressure.js';
import { handleClientError, handleError, handleNotFound } from './errors.js';
import { HTTP_DEFAULTS } from './defaults.js';
import { hostOriginGuard } from './host-guard.js';
import { ManifestRoots } from './manifest-roots.js';
import { RequestLog } from './request-log.js';
import { apiRoutes, healthRoutes } from './routes.js';

export interface HttpServerOptions {
  /** The bearer token every route but /health requires. */
  token: string;
  /** The address the server will bind (accepted as a Host name); default 127.0.0.1. */
  host?: string | undefined;
  /** More Host names to answer to (a LAN name when bound beyond loopback). */
  allowedHosts?: readonly string[] | undefined;
  /** Largest request body in bytes (default 1 MiB); larger ones get 413. */
  bodyLimit?: number | undefined;
  /** Requests in flight at once (default 64); more get 503 + Retry-After. */
  maxConcurrent?: number | undefined;
  /** Runs waiting in the queue (default 100); a POST /runs beyond it gets 429 + Retry-After. */
  maxQueuedRuns?: number | undefined;
  /** Time to receive a whole request, headers and body (default 30 s); a slow sender is cut off. */
  requestTimeoutMs?: number | undefined;
  /** Time to receive a request's headers (default 10 s): the slowloris bound. */
  headersTimeoutMs?: number | undefined;
  /** How often the server checks those timeouts (default 1 s). */
  timeoutCheckIntervalMs?: number | undefined;
  /** Idle time before a kept-alive connection is closed (default 5 s). */
  keepAliveTimeoutMs?: number | undefined;
  /** Open connections at once (default 5,120, less when the open-file limit is low); more are refused at accept. */
  maxConnections?: number | undefined;
  /**
   * Connections that have made no authenticated request yet (default 4,096, less when the
   * open-file limit is low); past it the one that has waited longest is closed.
   */
  maxGuestConnections?: number | undefined;
  /** Folders besides the data folder's `manifests/` that `POST /runs` may read manifests from (`serve --manifest-root`). */
  manifestRoots?: readonly string[] | undefined;
  logger?: Logger | undefined;
}

/** Builds the API over `engine` (not yet listening). The engine's scheduler is the caller's to start. */
export function createHttpServer(engine: Engine, opts: HttpServerOptions): FastifyInstance {
  const o = { ...HTTP_DEFAULTS, ...definedOnly(opts) };
  const service = engine.service;
  const log = componentLogger(opts.logger ?? rootLogger(), 'http');
  const app = Fastify({
    loggerInstance: log,
    logController: new RequestLog(),
    bodyLimit: o.bodyLimit,
    // A route parameter as long as the contract's longest id (1,000 characters), percent-encoded
    // (up to 9 bytes a character): such an id reaches the contract, which answers in its own shape.
    routerOptions: { maxParamLength: 9 * 1000 },
    requestTimeout: o.requestTimeoutMs,
    clientErrorHandler: handleClientError,
    keepAliveTimeout: o.keepAliveTimeoutMs,
    http: {
      headersTimeout: Math.min(o.headersTimeoutMs, o.requestTimeoutMs),
      connectionsCheckingInterval: o.timeoutCheckIntervalMs,
    },
  }) as unknown as FastifyInstance;
  app.server.maxConnections = o.maxConnections;
  const guests = new GuestSockets(o.maxGuestConnections);
  app.server.on('connection', (socket: Socket) => guests.admit(socket));

  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);

  app.addHook('onRequest', hostOriginGuard({ bindHost: o.host, allowedHosts: o.allowedHosts ?? [] }));
  // A WebSocket upgrade (the browser bridge's event socket) meets the same hooks as any request.
  // One refused with an HTTP answer holds a socket the server no longer tracks: it is closed once
  // answered (an accepted one is hijacked and never gets here).
  app.addHook('onResponse', (request, _reply, done) => {
    if (request.headers.upgrade !== undefined) request.raw.socket.destroy();
    done();
  });
  app.addHook('onRequest', concurrentRequestLimit(o.maxConcurrent));
  const limitQueuedRuns = queuedRunLimit(o.maxQueuedRuns, async () => {
    const queued = await service.listRuns({ status: 'queued', limit: Math.min(1000, o.maxQueuedRuns) });
    return queued.length;
  });
  void app.register(healthRoutes(service, packageVersion(), Date.now()));
  void app.register(apiRoutes, {
    dispatcher: engine.dispatcher,
    exportLines: (runId, format) => service.exportLines(runId, format),
    manifestRoots: ManifestRoots.of(engine.dataDir, opts.manifestRoots),
    tokenCheck: createTokenCheck(opts.token),
    queuedRunLimit: limitQueuedRuns,
  });
  return app;
}

function definedOnly<T extends object>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
