/**
 * The client over the browser bridge (core/http/bridge.ts): contract calls are
 * `POST /bridge/call/:method` with the launch token as a bearer header, answered with an Envelope;
 * events come over one WebSocket (`/bridge/events`, the token in a subprotocol, since a browser
 * cannot set headers on a socket), reopened with backoff when it drops — unless the server, asked
 * directly, refuses the token (it restarted with a new one): the state then says so, and the
 * client keeps asking slowly in case the old token comes back; an export is a download of
 * a one-time link the bridge hands out, so the token never appears in a URL.
 * Runs on: renderer (in a plain browser).
 */
import { ApiError, Listeners, unwrap, type CallArgs, type ConnectionState, type PanoptesClient } from './client.js';
import type { ControlEvent, ControlMethod, Envelope, HtmlReportResult, ManifestPreview, MethodResult } from './types.js';

function base64url(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The subprotocols the bridge expects: its name, and the token (base64url, so any token is a valid protocol name). */
export function eventSubprotocols(token: string): string[] {
  return ['panoptes', `panoptes.token.${base64url(token)}`];
}

const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 5000;

export function createBridgeClient(token: string, origin: string = window.location.origin): PanoptesClient {
  const events = new Listeners<ControlEvent>();
  const connection = new Listeners<ConnectionState>();
  let state: ConnectionState = 'connecting';
  let socket: WebSocket | null = null;
  let retryMs = RECONNECT_MIN_MS;

  const setState = (next: ConnectionState): void => {
    if (next === state) return;
    state = next;
    connection.emit(next);
  };

  const open = (): void => {
    const url = new URL('/bridge/events', origin);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(url, eventSubprotocols(token));
    socket = ws;
    ws.onopen = () => {
      retryMs = RECONNECT_MIN_MS;
      setState('open');
    };
    ws.onmessage = (message) => {
      if (typeof message.data !== 'string') return;
      events.emit(JSON.parse(message.data) as ControlEvent);
    };
    ws.onclose = () => {
      if (socket !== ws) return;
      socket = null;
      void tokenRefused().then((refused) => {
        setState(refused ? 'unauthorized' : 'reconnecting');
        setTimeout(open, refused ? RECONNECT_MAX_MS : retryMs);
        retryMs = Math.min(retryMs * 2, RECONNECT_MAX_MS);
      });
    };
  };

  /** Whether the server is up and refuses this token (a socket that failed to open cannot tell why). */
  const tokenRefused = async (): Promise<boolean> => {
    try {
      const res = await fetch(new URL('/bridge/call/defaults', origin), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      });
      return res.status === 401;
    } catch {
      return false;
    }
  };
  open();

  const post = async <T>(path: string, body: unknown, contentType = 'application/json'): Promise<T> => {
    let res: Response;
    try {
      res = await fetch(new URL(path, origin), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
        body: typeof body === 'string' ? body : JSON.stringify(body ?? {}),
      });
    } catch (err) {
      throw new ApiError({ code: 'connection', message: `cannot reach Panoptes: ${(err as Error).message}`, retryable: true });
    }
    const text = await res.text();
    // Every answer of the server, its guards' (token, Host/Origin, load) included, is an Envelope;
    // anything else came from something in between.
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      answer = null;
    }
    if (typeof answer === 'object' && answer !== null && 'ok' in answer) return unwrap(answer as Envelope<T>);
    throw new ApiError({ code: 'internal', message: `HTTP ${res.status}: ${text.slice(0, 200)}`, retryable: false });
  };

  return {
    kind: 'browser',
    call<M extends ControlMethod>(method: M, ...args: CallArgs<M>): Promise<MethodResult<M>> {
      return post<MethodResult<M>>(`/bridge/call/${method}`, args[0]);
    },
    onEvent: (listener) => events.add(listener),
    onConnection(listener) {
      const off = connection.add(listener);
      listener(state);
      return off;
    },
    chooseManifest: null,
    async uploadManifest(file) {
      const query = new URLSearchParams({ fileName: file.name });
      return post<ManifestPreview>(`/bridge/manifest?${query}`, await file.text(), 'text/plain; charset=utf-8');
    },
    async exportRun(runId, format, opts) {
      const { url, fileName } = await post<{ url: string; fileName: string }>('/bridge/export-link', { runId, format, ...(opts?.scores ? { scores: true } : {}) });
      const link = document.createElement('a');
      link.href = new URL(url, origin).href;
      link.download = fileName;
      link.rel = 'noopener';
      document.body.append(link);
      link.click();
      link.remove();
      return { kind: 'download', fileName };
    },
    async saveReport(input) {
      // The page is the answer (the server writes nothing): handed to the browser as a file of its own.
      const page = await post<HtmlReportResult>('/bridge/call/reportHtml', input);
      const href = URL.createObjectURL(new Blob([page.html ?? ''], { type: 'text/html;charset=utf-8' }));
      const link = document.createElement('a');
      link.href = href;
      link.download = page.fileName;
      document.body.append(link);
      link.click();
      link.remove();
      // Let go once the download has surely read it (some browsers read a blob URL after click() returns).
      setTimeout(() => URL.revokeObjectURL(href), 60_000);
      return { kind: 'download', fileName: page.fileName, rows: page.rows, total: page.total };
    },
  };
}
