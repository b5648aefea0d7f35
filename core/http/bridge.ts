/**
 * The browser bridge: the contract the desktop app reaches over IPC, served over HTTP + WebSocket
 * on the same Fastify instance as the HTTP API, plus the built renderer, so the very same React
 * app runs in a plain browser (`panoptes serve --ui`). Every route sits behind the server's
 * Host/Origin guard (a root hook of createHttpServer); everything but the static files needs the
 * per-launch token.
 *   POST /bridge/call/:method   a contract call; the body is the method's input, checked against
 *                               CONTRACT_INPUTS (the allowlist); the answer is an Envelope. A
 *                               manifest named by path is read only from ManifestRoots' folders
 *   POST /bridge/manifest       a manifest upload (the file's text as the body) -> checkManifest
 *   POST /bridge/export-link    a one-time download link for a run's export
 *   GET  /bridge/export/:runId.jsonl|.csv   the export, streamed (link or bearer token)
 *   GET  /bridge/events         WebSocket of ControlEvents (see bridge-events.ts)
 *   GET  /                      the renderer (dist/renderer), under a strict CSP
 * `exportRun` is not served: it writes a file wherever the caller says on the server's disk; a
 * browser downloads instead.
 * Runs on: Node (core).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { z } from 'zod';
import { PanoptesError, toPanoptesError } from '../domain.js';
import { packageRoot } from '../paths.js';
import {
  CONTRACT_INPUTS,
  RunIdInputSchema,
  type ControlApi,
  type ControlEvent,
  type CheckManifestInput,
  type ControlMethod,
  type CreateRunInput,
  type Envelope,
  type ScoreRunInput,
} from '../service/contract.js';
import { validateInput } from '../service/control-service.js';
import { bearerAuth, bearerToken, createTokenCheck } from './auth.js';
import { attachEventStream } from './bridge-events.js';
import { confineBaselineFiles } from './confine-baseline-files.js';
import { EXPORT_CONTENT_TYPES, ExportLinks, exportFileName, exportStream, type ExportFormat } from './bridge-export.js';
import { statusOf } from './errors.js';
import { allowedHostNames } from './host-guard.js';
import type { ManifestRoots } from './manifest-roots.js';

/** What the bridge needs of the engine: the contract, its events, and the export's lines. ControlService is one. */
export interface BridgeService extends ControlApi {
  subscribe(listener: (event: ControlEvent) => void): () => void;
  exportLines(runId: string, format: ExportFormat): Iterable<string>;
}

export interface BridgeOptions {
  service: BridgeService;
  /** The per-launch token the page presents. */
  token: string;
  /** The address the server binds, and more Host names it answers to (as given to createHttpServer). */
  bindHost: string;
  allowedHosts?: readonly string[];
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
  .object({ runId: RunIdInputSchema.shape.runId, format: z.enum(['jsonl', 'csv']) })
  .strict();
const ExportFileSchema = z.string().regex(/^[\w.-]{1,100}\.(jsonl|csv)$/, 'expected <runId>.jsonl or <runId>.csv');
const UploadQuerySchema = z.object({ fileName: z.string().max(200).optional() }).strict();

export function defaultRendererDir(): string {
  return join(packageRoot(), 'dist', 'renderer');
}

function isContractMethod(name: string): name is ControlMethod {
  return Object.hasOwn(CONTRACT_INPUTS, name);
}

/** Sends an error as an Envelope, with the status its code implies; internal details stay in the log. */
function sendFailure(reply: FastifyReply, err: unknown): FastifyReply {
  const e = toPanoptesError(err);
  const status = statusOf(e);
  if (status >= 500) reply.log.error({ err }, 'bridge call failed');
  const error = e.code === 'internal' ? { ...e.toJSON(), message: 'internal error' } : e.toJSON();
  return reply.code(status).send({ ok: false, error } satisfies Envelope<never>);
}

async function ok<T>(reply: FastifyReply, work: () => Promise<T>): Promise<FastifyReply> {
  try {
    return reply.send({ ok: true, value: await work() } satisfies Envelope<T>);
  } catch (err) {
    return sendFailure(reply, err);
  }
}

/** A call that names a manifest (or a baseline file) on the server's disk, with that path replaced by its real path once ManifestRoots allows it. */
async function confineManifest(method: ControlMethod, input: unknown, roots: ManifestRoots): Promise<unknown> {
  if (method === 'createRun') {
    const i = input as CreateRunInput;
    const scorers = await confineBaselineFiles(i.scorers, roots);
    return { ...i, manifestPath: await roots.resolve(i.manifestPath, 'manifestPath'), ...(scorers === undefined ? {} : { scorers }) };
  }
  if (method === 'scoreRun') {
    const i = input as ScoreRunInput;
    return { ...i, scorers: await confineBaselineFiles(i.scorers, roots) };
  }
  if (method === 'checkManifest') {
    const i = input as CheckManifestInput;
    return i.path === undefined ? i : { ...i, path: await roots.resolve(i.path, 'path') };
  }
  return input;
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
  const { service } = opts;
  const tokenCheck = createTokenCheck(opts.token);
  const links = new ExportLinks();

  // The contract, behind the token.
  await app.register(async (api: FastifyInstance) => {
    api.addHook('onRequest', bearerAuth(tokenCheck));

    api.post<{ Params: { method: string } }>('/bridge/call/:method', async (request, reply) => {
      const { method } = request.params;
      if (!isContractMethod(method) || NOT_FOR_BROWSERS.has(method)) {
        return sendFailure(reply, new PanoptesError('not_found', `no method "${method}" on the browser bridge`, { where: 'method' }));
      }
      return ok(reply, async () => {
        const input = await confineManifest(method, validateInput(method, request.body), opts.manifestRoots);
        return (service[method] as (input: unknown) => Promise<unknown>).call(service, input);
      });
    });

    api.register(async (upload: FastifyInstance) => {
      upload.addContentTypeParser(['application/x-ndjson', 'application/jsonl'], { parseAs: 'string', bodyLimit: MAX_UPLOAD_BYTES }, (_req, body, done) =>
        done(null, body),
      );
      upload.post('/bridge/manifest', { bodyLimit: MAX_UPLOAD_BYTES }, async (request, reply) =>
        ok(reply, async () => {
          const { fileName } = parse(UploadQuerySchema, request.query, 'query');
          if (typeof request.body !== 'string') {
            throw new PanoptesError('invalid_input', 'send the manifest text as the body (text/plain)', { where: 'body' });
          }
          return service.checkManifest({ content: request.body, ...(fileName === undefined ? {} : { fileName }) });
        }),
      );
    });

    api.post('/bridge/export-link', async (request, reply) =>
      ok(reply, async () => {
        const { runId, format } = parse(ExportLinkInputSchema, request.body, 'body');
        await service.stats({ runId }); // not_found for a run that does not exist
        const link = links.create(runId, format);
        return { url: `/bridge/export/${encodeURIComponent(`${runId}.${format}`)}?link=${link}`, fileName: exportFileName(runId, format) };
      }),
    );
  });

  // The download: a one-time link (a browser following it cannot send a header) or the bearer token.
  app.get<{ Params: { file: string }; Querystring: { link?: string } }>('/bridge/export/:file', async (request, reply) => {
    try {
      const file = parse(ExportFileSchema, request.params.file, 'file');
      const format = (file.endsWith('.csv') ? 'csv' : 'jsonl') satisfies ExportFormat;
      const runId = file.slice(0, file.length - format.length - 1);
      const link = typeof request.query.link === 'string' ? request.query.link : undefined;
      if (!links.redeem(link, runId, format) && !tokenCheck(bearerToken(request))) {
        reply.header('www-authenticate', 'Bearer realm="panoptes"');
        return reply.code(401).send({ ok: false, error: { code: 'auth', message: 'missing, used or expired download link', retryable: false } });
      }
      await service.stats({ runId }); // not_found before any byte is sent
      return reply
        .header('content-type', EXPORT_CONTENT_TYPES[format])
        .header('content-disposition', `attachment; filename="${exportFileName(runId, format)}"`)
        .header('cache-control', 'no-store')
        .send(exportStream((id, f) => service.exportLines(id, f), runId, format));
    } catch (err) {
      return sendFailure(reply, err);
    }
  });

  // Pushed events.
  const events = attachEventStream({
    server: app.server,
    subscribe: (listener) => service.subscribe(listener),
    tokenCheck,
    allowedHosts: allowedHostNames({ bindHost: opts.bindHost, allowedHosts: opts.allowedHosts ?? [] }),
  });
  app.addHook('preClose', (done) => {
    events.close();
    done();
  });

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
