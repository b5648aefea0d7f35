/**
 * Test harness for the HTTP API: a real engine over a temp data dir (real SQLite), the real
 * Fastify server listening on 127.0.0.1 port 0, and a plain node:http client that can set any
 * header (Host and Origin included, which fetch will not).
 * Runs on: Node (tests).
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createHttpServer, type HttpServerOptions } from '../../core/http/api.js';
import { openEngine, type Engine, type EngineOptions } from '../../core/service/engine.js';
import { tempDir, writeMockCatalog } from '../helpers/temp.js';

export const TOKEN = 'test-token-0123456789abcdef';

export interface ApiHarness {
  engine: Engine;
  app: FastifyInstance;
  dataDir: string;
  dir: string;
  port: number;
  url: string;
  /** A request with the right token and Host unless `headers` says otherwise. */
  call(method: string, path: string, opts?: { body?: unknown; headers?: Record<string, string> }): Promise<HttpAnswer>;
  close(): Promise<void>;
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed JSON body (undefined when the body is not JSON); loosely typed, as each route answers its own shape. */
  json: any;
}

/** Mock models for API tests: instant, slightly slow, and one that is rate-limited now and then. */
export const MOCK_MODELS = {
  fast: { latencyMs: 0 },
  steady: { latencyMs: 2, jitterMs: 1 },
  // A vignette fails for good only after 6 failed attempts: at 0.15 that is 1 in 88,000 calls (0.3 failed a run in 35).
  flaky: { latencyMs: 1, errorRate: 0.15, errorKind: 'rate_limit', retryAfterMs: 1 },
};

export async function startApi(
  opts: {
    http?: Partial<HttpServerOptions>;
    engine?: Partial<EngineOptions>;
    startScheduler?: boolean;
    /** Registers more on the server before it listens (the browser bridge). */
    addons?: (app: FastifyInstance, at: { engine: Engine; dir: string; dataDir: string }) => Promise<void>;
  } = {},
): Promise<ApiHarness> {
  const tmp = tempDir();
  const dataDir = join(tmp.dir, 'data');
  const catalog = writeMockCatalog(tmp.dir, MOCK_MODELS);
  const engine = openEngine({ dataDir, catalogPaths: [catalog], tickMs: 20, ...opts.engine });
  // Tests keep their manifests beside the data folder.
  const app = createHttpServer(engine, { token: TOKEN, manifestRoots: [tmp.dir], ...opts.http });
  await opts.addons?.(app, { engine, dir: tmp.dir, dataDir });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  if (opts.startScheduler ?? true) engine.scheduler.start();
  const url = `http://127.0.0.1:${port}`;
  return {
    engine,
    app,
    dataDir,
    dir: tmp.dir,
    port,
    url,
    call: (method, path, o = {}) =>
      send(port, method, path, {
        headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${TOKEN}`, ...o.headers },
        ...(o.body === undefined ? {} : { body: typeof o.body === 'string' ? o.body : JSON.stringify(o.body) }),
      }),
    async close() {
      await app.close();
      await engine.close();
      tmp.cleanup();
    },
  };
}

/** One HTTP/1.1 request over its own connection; headers exactly as given (an empty value drops one). */
export function send(
  port: number,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string } = {},
): Promise<HttpAnswer> {
  const headers: Record<string, string> = { ...opts.headers };
  for (const [k, v] of Object.entries(headers)) if (v === '') delete headers[k];
  if (opts.body !== undefined) headers['content-type'] ??= 'application/json';
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Polls a run until it reaches a terminal status (bounded). */
export async function waitForRun(api: ApiHarness, runId: string, timeoutMs = 30_000): Promise<HttpAnswer> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api.call('GET', `/runs/${runId}`);
    if (['done', 'failed', 'cancelled'].includes(res.json?.run?.status)) return res;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not finish: ${res.text.slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A raw connection that has sent `head` and then keeps quiet; resolves once connected. */
export function openRaw(port: number, head: string): Promise<{ socket: Socket; received: () => string; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(head);
      resolve({ socket, received: () => data, closed });
    });
    let data = '';
    socket.on('data', (d: Buffer) => (data += d.toString()));
    socket.on('error', () => undefined); // a reset is one way of being cut off
    const closed = new Promise<number>((r) => socket.on('close', () => r(Date.now() - started)));
    socket.once('error', reject);
  });
}
