/**
 * The browser bridge's event stream: one WebSocket per browser tab at `/bridge/events`, pushing
 * the engine's ControlEvents as JSON text frames. The socket is a Fastify route
 * (`@fastify/websocket`), so its upgrade request meets the same hooks as every other request — the
 * server's Host/Origin guard first — and then this route's token check. A browser cannot put
 * headers on a WebSocket, so the launch token travels as a subprotocol
 * (`panoptes.token.<base64url(token)>`, beside the plain `panoptes` the server answers with). Each
 * event is serialised once for all tabs; a tab that stops reading (its unsent bytes pass a cap) is
 * disconnected rather than buffered without bound, and it reconnects and fetches afresh. Pings
 * find dead peers.
 * Runs on: Node (core).
 */
import fastifyWebsocket from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { WebSocket } from 'ws';
import { vouchFor } from '../concurrency/guest-sockets.js';
import type { ControlEvent } from '../service/contract.js';
import { sendError } from './errors.js';

export const EVENTS_PATH = '/bridge/events';
export const EVENTS_PROTOCOL = 'panoptes';
const TOKEN_PROTOCOL_PREFIX = 'panoptes.token.';

export interface EventStreamOptions {
  subscribe: (listener: (event: ControlEvent) => void) => () => void;
  tokenCheck: (presented: string | undefined) => boolean;
  /** Unsent bytes a tab may fall behind by before it is dropped (default 8 MiB). */
  maxBufferedBytes?: number;
  /** How often peers are pinged; one missed pong drops them (default 30 s). */
  heartbeatMs?: number;
}

/** The launch token a browser put in its subprotocols, if any. */
export function tokenFromProtocols(header: string | string[] | undefined): string | undefined {
  const values = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((p) => p.trim());
  const carrier = values.find((p) => p.startsWith(TOKEN_PROTOCOL_PREFIX));
  return carrier === undefined ? undefined : Buffer.from(carrier.slice(TOKEN_PROTOCOL_PREFIX.length), 'base64url').toString('utf8');
}

/** The route's own hook: 401 unless the upgrade carries the token in its subprotocols. */
function subprotocolAuth(check: (presented: string | undefined) => boolean): onRequestHookHandler {
  return function authenticateSocket(request: FastifyRequest, reply: FastifyReply, done: () => void) {
    if (check(tokenFromProtocols(request.headers['sec-websocket-protocol']))) {
      vouchFor(request.raw.socket);
      done();
      return;
    }
    sendError(reply, 401, 'unauthorized', 'missing or wrong token (subprotocol panoptes.token.<base64url token>)');
  };
}

/** Registers the event socket on `app`; the socket closes its tabs when the server closes. */
export async function eventStreamRoutes(app: FastifyInstance, opts: EventStreamOptions): Promise<void> {
  const maxBuffered = opts.maxBufferedBytes ?? 8 * 1024 * 1024;
  const clients = new Map<WebSocket, { alive: boolean }>();
  let unsubscribe: (() => void) | null = null;

  const publish = (event: ControlEvent): void => {
    const data = JSON.stringify(event);
    for (const ws of clients.keys()) {
      if (ws.readyState !== WebSocket.OPEN) continue;
      if (ws.bufferedAmount > maxBuffered) {
        ws.close(1013, 'too far behind; reconnect');
        continue;
      }
      ws.send(data);
    }
  };

  const drop = (ws: WebSocket): void => {
    clients.delete(ws);
    if (clients.size === 0 && unsubscribe) {
      unsubscribe();
      unsubscribe = null;
    }
  };

  const heartbeat = setInterval(() => {
    for (const [ws, state] of clients) {
      if (!state.alive) {
        ws.terminate();
        drop(ws);
        continue;
      }
      state.alive = false;
      ws.ping();
    }
  }, opts.heartbeatMs ?? 30_000);
  heartbeat.unref();

  await app.register(fastifyWebsocket, {
    options: {
      maxPayload: 4096,
      perMessageDeflate: false,
      handleProtocols: (protocols) => (protocols.has(EVENTS_PROTOCOL) ? EVENTS_PROTOCOL : false),
    },
    // Tabs see the socket drop and reconnect (with backoff) once a server is back.
    preClose(done) {
      clearInterval(heartbeat);
      for (const ws of [...clients.keys()]) {
        ws.terminate();
        drop(ws);
      }
      this.websocketServer.close();
      done();
    },
  });

  // The plugin would upgrade a request to any route here (the static files' included) only to
  // close it; an upgrade is answered only on the event socket's path.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.headers.upgrade === undefined || request.routeOptions.url === EVENTS_PATH) {
      done();
      return;
    }
    sendError(reply, 404, 'not_found', `no socket at ${request.url.split('?')[0]}`);
  });

  app.get(EVENTS_PATH, { websocket: true, onRequest: subprotocolAuth(opts.tokenCheck) }, (ws) => {
    clients.set(ws, { alive: true });
    unsubscribe ??= opts.subscribe(publish);
    ws.on('pong', () => {
      const state = clients.get(ws);
      if (state) state.alive = true;
    });
    ws.on('close', () => drop(ws));
    ws.on('error', () => ws.terminate());
  });
}
