/**
 * The browser bridge: the contract the desktop app reaches over IPC, served over HTTP + WebSocket
 * on the same Fastify instance as the HTTP API, plus the built renderer, so the very same React
 * app runs in a plain browser (`panoptes serve --ui`). Every route sits behind the server's
 * Host/Origin guard (a root hook of createHttpServer); everything but the static files needs the
 * per-launch token.
 *   POST /bridge/call/:method   a contract call, carried to the ContractDispatcher as it came:
 *                               the body is the method's raw input; the answer is an Envelope
 *                               (an error in the server's one shape, errors.ts). A manifest
 *                               named by path is read only from ManifestRoots' folders
 *   POST /bridge/manifest       a manifest upload (the file's text as the body) -> checkManifest
 *   POST /bridge/export-link    a one-time download link for a run's export
 *   GET  /bridge/export/:runId.jsonl|.csv|.inspect.tar   the export, streamed (link or bearer token)
 *   GET  /bridge/events         WebSocket of ControlEvents (see bridge-events.ts)
 *   GET  /                      the renderer (dist/renderer), under a strict CSP
 * `exportRun` is not served: it writes a file wherever the caller says on the server's disk; a
 * browser downloads instead. The upload and the export link are contract calls too (checkManifest,
 * stats), through the same dispatcher and policy.
 * Runs on: Node (core).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { z } from 'zod';
import { PanoptesError } from '../domain.js';
import { packageRoot } from '../paths.js';
import { RunIdInputSchema, type ControlEvent, type ControlMethod, type Envelope } from '../service/contract.js';
import type { ContractDispatcher, TransportPolicy } from '../service/contract-dispatcher.js';
import type { Engine } from '../service/engine.js';
import { bearerAuth, bearerToken, createTokenCheck } from './auth.js';
import { eventStreamRoutes } from './bridge-events.js';
import { EXPORT_CONTENT_TYPES, ExportLinks, exportFileName, exportStream, type ExportFormat, type ExportLines } from './bridge-export.js';
import { sendError, sendFailure } from './errors.js';
import type { ManifestRoots } from './manifest-roots.js';
import { inspectArchive } from './inspect-archive.js';
import { exportKindOf } from '../service/run-export.js';

export interface BridgeOptions {
  /** Serves the contract's calls. */
  dispatcher: ContractDispatcher;
  /** The contract's pushed events. */
  subscribe(listener: (event: ControlEvent) => void): () => void;
  /** A run's export, line by line. */
  exportLines: ExportLines;
  /** The per-launch token the page presents. */
  token: string;
  /** Where `createRun` and `checkManifest` may read a manifest named by path. */
  manifestRoots: ManifestRoots;
  /** The built renderer (default: dist/renderer in the package). */
  rendererDir?: string;
}

/** Methods a browser may call: the whole contract but exportRun (see above). */
const NOT_FOR_BROWSERS: ReadonlySet<ControlMethod> = new Set(['exportRun']);

/** The largest manifest a browser may upload: the contract's own cap on `content`. */
const MAX_UPLOAD_BYTES = 256 * 1024 * 1024;

/** The page may load only its own files and talk only to this server: no inline script, no eval, no framing. */
export const RENDERER_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const ExportLinkInputSchema = z
  .object({ runId: RunIdInputSchema.shape.runId, format: z.enum(['jsonl', 'csv', 'inspect']), scores: z.boolean().optional() })
  .strict();
const ExportFileSchema = z.string().regex(/^[\w.-]{1,100}\.(jsonl|csv|inspect\.tar)$/, 'expected <runId>.jsonl, <runId>.csv or <runId>.inspect.tar');
const UploadQuerySchema = z.object({ fileName: z.string().max(200).optional() }).strict();

/** What the bridge serves, taken from an open engine. */
export function bridgeSources(engine: Pick<Engine, 'dispatcher' | 'service'>): Pick<BridgeOptions, 'dispatcher' | 'subscribe' | 'exportLines'> {
  return {
    dispatcher: engine.dispatcher,
    subscribe: (listener) => engine.service.subscribe(listener),
    exportLines: (runId, format, scores) => engine.service.exportLines(runId, exportKindOf(format, scores)),
  };
}

export function defaultRendererDir(): string {
  return join(packageRoot(), 'dist', 'renderer');
}

/** Answers with the dispatcher's Envelope: the value, or the error with the status its code implies. */
function sendEnvelope(reply: FastifyReply, answer: Envelope<unknown>): FastifyReply {
  return answer.ok ? reply.send(answer) : sendFailure(reply, answer);
}

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new PanoptesError('invalid_input', `${what}: ${parsed.error.issues.map((i) => i.message).join('; ')}`, { where: what });
  return parsed.data;
}

export const browserBridge: FastifyPluginAsync<BridgeOptions> = async (app, opts) => {
  const rendererDir = opts.rendererDir ?? defaultRendererDir();
  if (!existsSync(join(rendererDir, 'index.html'))) {
    throw new PanoptesError('not_found', `the app is not built (no ${join(rendererDir, 'index.html')}): run npm run build`, {
      where: rendererDir,
    });
  }
  const { dispatcher } = opts;
  const tokenCheck = createTokenCheck(opts.token);
  const links = new ExportLinks();
  const policy: TransportPolicy = {
    name: 'browser bridge',
    refuses: NOT_FOR_BROWSERS,
    admit: (method, input) => opts.manifestRoots.confine(method, input),
    onInternal: (err, method) => app.log.error({ err, method }, 'bridge call failed'),
  };
  /** A call of the bridge's own routes, the same way a `/bridge/call` is made. */
  const invoke = (method: ControlMethod, input: unknown): Promise<unknown> => dispatcher.invoke(method, input, policy);
  /** Work of the bridge's own routes, answered as an Envelope like every call (a failure by the server's error handler, errors.ts). */
  const answer = async (reply: FastifyReply, work: () => Promise<unknown>): Promise<FastifyReply> =>
    sendEnvelope(reply, { ok: true, value: await work() });

  // The contract, behind the token.
  await app.register(async (api: FastifyInstance) => {
    api.addHook('onRequest', bearerAuth(tokenCheck));

    api.post<{ Params: { method: string } }>('/bridge/call/:method', async (request, reply) =>
      sendEnvelope(reply, await dispatcher.call(request.params.method, request.body, policy)),
    );

    api.register(async (upload: FastifyInstance) => {
      upload.addContentTypeParser(['application/x-ndjson', 'application/jsonl'], { parseAs: 'string', bodyLimit: MAX_UPLOAD_BYTES }, (_req, body, done) =>
        done(null, body),
      );
      upload.post('/bridge/manifest', { bodyLimit: MAX_UPLOAD_BYTES }, async (request, reply) =>
        answer(reply, async () => {
          const { fileName } = parse(UploadQuerySchema, request.query, 'query');
          if (typeof request.body !== 'string') {
            throw new PanoptesError('invalid_input', 'send the manifest text as the body (text/plain)', { where: 'body' });
          }
          return invoke('checkManifest', { content: request.body, fileName });
        }),
      );
    });

    api.post('/bridge/export-link', async (request, reply) =>
      answer(reply, async () => {
        const { runId, format, scores } = parse(ExportLinkInputSchema, request.body, 'body');
        await invoke('stats', { runId }); // not_found for a run that does not exist
        const link = links.create(runId, format, scores === true);
        const file = format === 'inspect' ? `${runId}.inspect.tar` : `${runId}.${format}`;
        return { url: `/bridge/export/${encodeURIComponent(file)}?link=${link}`, fileName: exportFileName(runId, format) };
      }),
    );
  });

  // The download: a one-time link (a browser following it cannot send a header) or the bearer token.
  app.get<{ Params: { file: string }; Querystring: { link?: string; scores?: string } }>('/bridge/export/:file', async (request, reply) => {
    const file = parse(ExportFileSchema, request.params.file, 'file');
    const format: ExportFormat = file.endsWith('.inspect.tar') ? 'inspect' : file.endsWith('.csv') ? 'csv' : 'jsonl';
    const runId = file.slice(0, file.length - (format === 'inspect' ? '.inspect.tar' : `.${format}`).length);
    const link = typeof request.query.link === 'string' ? request.query.link : undefined;
    const redeemed = links.redeem(link, runId, format);
    if (!redeemed && !tokenCheck(bearerToken(request))) {
      reply.header('www-authenticate', 'Bearer realm="panoptes"');
      return sendError(reply, 401, 'unauthorized', 'missing, used or expired download link');
    }
    await invoke('stats', { runId }); // not_found before any byte is sent
    // The inspect logs are written by the server into a folder of its own (not the browser's exportRun, which it refuses).
    const body =
      format === 'inspect'
        ? await inspectArchive(opts.dispatcher, runId)
        : exportStream(opts.exportLines, runId, format, redeemed?.scores ?? request.query.scores === '1');
    return reply
      .header('content-type', EXPORT_CONTENT_TYPES[format])
      .header('content-disposition', `attachment; filename="${exportFileName(runId, format)}"`)
      .header('cache-control', 'no-store')
      .send(body);
  });

  // Pushed events: a WebSocket route, behind the server's Host/Origin guard like every route, and its own token check.
  await eventStreamRoutes(app, { subscribe: (listener) => opts.subscribe(listener), tokenCheck });

  // The app itself: no token needed to load it (the page holds no data until it presents one).
  await app.register(fastifyStatic, {
    root: rendererDir,
    prefix: '/',
    index: 'index.html',
    cacheControl: false,
    setHeaders(res, path) {
      res.setHeader('content-security-policy', RENDERER_CSP);
      res.setHeader('x-content-type-options', 'nosniff');
      res.setHeader('referrer-policy', 'no-referrer');
      res.setHeader('x-frame-options', 'DENY');
      // Bundles carry a content hash in their names; the page itself must always be fresh.
      res.setHeader('cache-control', path.includes(`${join('assets', '')}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
};
