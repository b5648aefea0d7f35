/**
 * The browser bridge's event stream: one WebSocket per browser tab at `/bridge/events`, pushing
 * the engine's ControlEvents as JSON text frames. A browser cannot put headers on a WebSocket, so
 * the launch token travels as a subprotocol (`panoptes.token.<base64url(token)>`, beside the plain
 * `panoptes` the server answers with), and the upgrade request passes the same Host/Origin check
 * as every HTTP request. Each event is serialised once for all tabs; a tab that stops reading
 * (its unsent bytes pass a cap) is disconnected rather than buffered without bound, and it
 * reconnects and fetches afresh. Pings find dead peers.
 * Runs on: Node (core).
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { ControlEvent } from '../service/contract.js';
import { hostOriginProblem } from './host-guard.js';

export const EVENTS_PATH = '/bridge/events';
export const EVENTS_PROTOCOL = 'panoptes';
const TOKEN_PROTOCOL_PREFIX = 'panoptes.token.';

export interface EventStreamOptions {
  server: Server;
  subscribe: (listener: (event: ControlEvent) => void) => () => void;
  tokenCheck: (presented: string | undefined) => boolean;
  /** Host names the server answers to (see host-guard.ts). */
  allowedHosts: ReadonlySet<string>;
  /** Unsent bytes a tab may fall behind by before it is dropped (default 8 MiB). */
  maxBufferedBytes?: number;
  /** How often peers are pinged; one missed pong drops them (default 30 s). */
  heartbeatMs?: number;
}

export interface EventStream {
  readonly clients: number;
  close(): void;
}

/** The launch token a browser put in its subprotocols, if any. */
export function tokenFromProtocols(header: string | string[] | undefined): string | undefined {
  const values = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((p) => p.trim());
  const carrier = values.find((p) => p.startsWith(TOKEN_PROTOCOL_PREFIX));
  return carrier === undefined ? undefined : Buffer.from(carrier.slice(TOKEN_PROTOCOL_PREFIX.length), 'base64url').toString('utf8');
}

function refuse(socket: Duplex, status: number, reason: string): void {
  const text = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' }[status] ?? 'Bad Request';
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(reason)}\r\n\r\n${reason}`);
}

export function attachEventStream(opts: EventStreamOptions): EventStream {
  const maxBuffered = opts.maxBufferedBytes ?? 8 * 1024 * 1024;
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: 4096,
    perMessageDeflate: false,
    handleProtocols: (protocols) => (protocols.has(EVENTS_PROTOCOL) ? EVENTS_PROTOCOL : false),
  });
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

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const path = new URL(request.url ?? '/', 'http://bridge').pathname;
    if (path !== EVENTS_PATH) {
      // Another listener may own this path; with none, say so instead of leaving the socket hanging.
      if (opts.server.listenerCount('upgrade') === 1) refuse(socket, 404, 'no such socket');
      return;
    }
    const origin = request.headers.origin;
    const problem = hostOriginProblem(request.headers.host, typeof origin === 'string' ? origin : undefined, opts.allowedHosts);
    if (problem !== null) return refuse(socket, 403, problem);
    if (!opts.tokenCheck(tokenFromProtocols(request.headers['sec-websocket-protocol']))) {
      return refuse(socket, 401, 'missing or wrong token (subprotocol panoptes.token.<base64url token>)');
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      clients.set(ws, { alive: true });
      unsubscribe ??= opts.subscribe(publish);
      ws.on('pong', () => {
        const state = clients.get(ws);
        if (state) state.alive = true;
      });
      ws.on('close', () => drop(ws));
      ws.on('error', () => ws.terminate());
    });
  };
  opts.server.on('upgrade', onUpgrade);

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

  return {
    get clients() {
      return clients.size;
    },
    close() {
      clearInterval(heartbeat);
      opts.server.off('upgrade', onUpgrade);
      // Tabs see the socket drop and reconnect (with backoff) once a server is back.
      for (const ws of [...clients.keys()]) {
        ws.terminate();
        drop(ws);
      }
      wss.close();
    },
  };
}
