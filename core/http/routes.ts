/**
 * The HTTP API's routes: a declared mapping of (HTTP method, path) onto contract methods, served by
 * the same ContractDispatcher as IPC and the browser bridge. Each route says where its input's
 * fields come from — the path's parameters, the query string or the JSON body, a body field under
 * another name — and, when the API's answer differs from the contract's result, how to present it
 * (a status, a header, the original accounting's snake_case shapes). The raw parts go to the
 * dispatcher, which validates them once with the contract's schema, so an error names the field and
 * has the server's one error shape (errors.ts). There is no zod-to-Fastify glue
 * (fastify-type-provider-zod): no route validates on its own, so there is nothing for it to wire.
 * `GET /runs/:id/responses.jsonl` and `GET /runs/:id/inspect.tar` (streams, not contract calls) and
 * `healthRoutes` (outside the token) are the hand-written routes.
 * Runs on: Node (core).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { z } from 'zod';
import { PanoptesError } from '../domain.js';
import {
  CONTRACT_INPUTS,
  type ControlMethod,
  type Envelope,
  type MethodInput,
  type MethodResult,
  type Run,
} from '../service/contract.js';
import type { ContractDispatcher, TransportPolicy } from '../service/contract-dispatcher.js';
import type { EngineService } from '../service/engine.js';
import { bearerAuth } from './auth.js';
import { sendFailure } from './errors.js';
import type { ManifestRoots } from './manifest-roots.js';
import { STATS_JSON_SCHEMA } from './stats-schema.js';
import { toRunStats, toStatsShape } from './stats-shapes.js';
import { INSPECT_ARCHIVE_TYPE, inspectArchive, inspectArchiveName } from './inspect-archive.js';

/** A further contract call a route's presentation makes, under the route's policy; its errors are thrown. */
type FollowUpCall = <N extends ControlMethod>(method: N, input: MethodInput<N>) => Promise<MethodResult<N>>;

/** Where a contract field is read from, when not from the route's `rest` part under its own name. */
type FieldSource = { param: string } | { body: string };

export interface RestRoute<M extends ControlMethod = ControlMethod> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: string;
  /** The contract method it calls. */
  call: M;
  /** The part whose fields are the input's other fields: the query string (numbers read from text) or the JSON body. */
  rest?: 'query' | 'body';
  /** Contract fields read from the path, or from the body under another name (errors then name them as the request did). */
  fields?: Record<string, FieldSource>;
  /**
   * The answer when it is not the result itself with 200: a status, a header, another shape (which
   * may take a second contract call, `more`, made with the same policy).
   */
  present?(result: MethodResult<M>, reply: FastifyReply, more: FollowUpCall): unknown;
  /** Fastify's JSON schema of the 200 answer (fixes the shape and serializes it fast). */
  responseSchema?: object;
  /** A hook that may refuse the request before the call (the queued-run cap). */
  preHandler?: 'queuedRunLimit';
}

function route<M extends ControlMethod>(r: RestRoute<M>): RestRoute {
  return r as unknown as RestRoute;
}

/** The API, route by route: what `docs/reference/http-api.md` documents. */
export const REST_ROUTES: readonly RestRoute[] = [
  route({
    method: 'POST',
    url: '/runs',
    call: 'createRun',
    rest: 'body',
    fields: { manifestPath: { body: 'manifest' } },
    preHandler: 'queuedRunLimit',
    present: (run, reply) => reply.code(201).header('location', `/runs/${run.id}`).send(run),
  }),
  route({ method: 'GET', url: '/runs', call: 'listRuns', rest: 'query', present: (runs) => ({ runs }) }),
  route({ method: 'GET', url: '/runs/:id', call: 'getRun', fields: { runId: { param: 'id' } } }),
  route({
    method: 'POST',
    url: '/runs/:id/cancel',
    call: 'cancelRun',
    fields: { runId: { param: 'id' } },
    // Cancelling a cancelled run is a no-op (200); a run that ended otherwise cannot be cancelled.
    present: (run: Run) => {
      if (run.status !== 'cancelled') throw new PanoptesError('conflict', `run ${run.id} is ${run.status} already; nothing to cancel`, { where: 'runId' });
      return run;
    },
  }),
  // A run's name, notes, tags and archived flag (fields absent are left as they are).
  route({ method: 'PATCH', url: '/runs/:id', call: 'describeRun', rest: 'body', fields: { runId: { param: 'id' } } }),
  // A finished run deleted for good (409 while it is queued, running or being scored: cancel it first).
  route({ method: 'DELETE', url: '/runs/:id', call: 'deleteRun', fields: { runId: { param: 'id' } } }),
  // The app's retry button: scope "failed" finishes the run's failed and cancelled jobs' missing records; "all" starts it anew.
  route({ method: 'POST', url: '/runs/:id/retry', call: 'retryRun', rest: 'body', fields: { runId: { param: 'id' } } }),
  // What Run again would create (manifest, models, epochs, options, name, scorers), for a form to show filled in.
  route({ method: 'GET', url: '/runs/:id/draft', call: 'runDraft', fields: { runId: { param: 'id' } } }),
  route({ method: 'GET', url: '/runs/:id/responses', call: 'responses', rest: 'query', fields: { runId: { param: 'id' } } }),
  route({
    method: 'GET',
    url: '/runs/:id/stats',
    call: 'getRun',
    fields: { runId: { param: 'id' } },
    // The run's retries on hard fails and its judges' calls are priced by the stats call, beside the sweep's own usage.
    present: async (detail, _reply, more) => toRunStats(detail, await more('stats', { runId: detail.run.id })),
  }),
  // Scores a run with a scoring file's scorers (records as they land, or a finished run again): 202 with the scoring status.
  route({
    method: 'POST',
    url: '/runs/:id/score',
    call: 'scoreRun',
    rest: 'body',
    fields: { runId: { param: 'id' } },
    present: (status, reply) => reply.code(202).send(status),
  }),
  route({ method: 'GET', url: '/runs/:id/report', call: 'report', rest: 'query', fields: { runId: { param: 'id' } } }),
  // The same report as one self-contained HTML page (what `report --html` writes and the app's Save report saves).
  route({
    method: 'GET',
    url: '/runs/:id/report.html',
    call: 'reportHtml',
    rest: 'query',
    fields: { runId: { param: 'id' } },
    present: (page, reply) =>
      reply
        .type('text/html; charset=utf-8')
        .header('content-disposition', `inline; filename="${page.fileName}"`)
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-store')
        .send(page.html),
  }),
  // Two runs of one manifest, paired by vignette id, model by model (diff = B − A): what the app's Compare runs shows.
  route({
    method: 'GET',
    url: '/runs/:id/compare/:other',
    call: 'compareRuns',
    rest: 'query',
    fields: { runA: { param: 'id' }, runB: { param: 'other' } },
  }),
  // The vignettes whose pass/fail verdict changed from one run to the other, per model.
  route({ method: 'GET', url: '/runs/:id/flips/:other', call: 'flippedVignettes', rest: 'query', fields: { runA: { param: 'id' }, runB: { param: 'other' } } }),
  route({ method: 'GET', url: '/runs/:id/scores/matrix', call: 'scoreMatrix', rest: 'query', fields: { runId: { param: 'id' } } }),
  route({
    method: 'GET',
    url: '/runs/:id/scores/vignettes/:vignetteId',
    call: 'scoreDetail',
    fields: { runId: { param: 'id' }, vignetteId: { param: 'vignetteId' } },
  }),
  // A head run against a base run, for CI: each scorer x model verdict and the decision (pass, worse, incomparable).
  route({ method: 'POST', url: '/gate', call: 'gate', rest: 'body' }),
  // Before a sweep: the vignettes x epochs grid for a difference at a power, with each design's cost.
  route({ method: 'POST', url: '/plan', call: 'plan', rest: 'body' }),
  // A run's anytime-valid decision: its vignettes in a seeded order, each pair stopped when decided.
  route({ method: 'GET', url: '/runs/:id/decision', call: 'decide', rest: 'query', fields: { runId: { param: 'id' } } }),
  // A repository (a folder, a .tar.gz, a git folder's diff under a manifest root) packed into a manifest kept in the data folder.
  route({ method: 'POST', url: '/packs', call: 'packRepository', rest: 'body' }),
  route({ method: 'POST', url: '/packs/:id/cancel', call: 'cancelPack', fields: { packId: { param: 'id' } } }),
  route({ method: 'GET', url: '/stats', call: 'stats', present: (report) => toStatsShape(report), responseSchema: STATS_JSON_SCHEMA }),
  route({ method: 'GET', url: '/metrics', call: 'metrics', rest: 'query' }),
  route({ method: 'GET', url: '/roster', call: 'roster' }),
  route({ method: 'POST', url: '/probe', call: 'probe', rest: 'body' }),
];

/** A contract method's input object schema (under `.optional()` for the methods whose input may be left out). */
function inputShape(method: ControlMethod): Record<string, z.ZodType> {
  let schema = CONTRACT_INPUTS[method] as z.ZodType;
  if (schema instanceof z.ZodOptional) schema = schema.unwrap() as z.ZodType;
  return schema instanceof z.ZodObject ? (schema.shape as Record<string, z.ZodType>) : {};
}

function isNumber(schema: z.ZodType): boolean {
  const inner = schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema;
  return inner instanceof z.ZodNumber;
}

/**
 * A query string as a contract input: the method's number fields parsed from text (an empty value
 * counts as absent; text that is not a number fails the contract's own check).
 */
function queryInput(method: ControlMethod, query: unknown): Record<string, unknown> {
  const shape = inputShape(method);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    if (typeof value === 'string' && value.trim() === '') continue;
    const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
    out[key] = typeof value === 'string' && field !== undefined && isNumber(field) ? Number(value) : value;
  }
  return out;
}

/** The raw contract input a request carries, as the route declares it. */
function restInput(r: RestRoute, request: Pick<FastifyRequest, 'params' | 'query' | 'body'>): unknown {
  const params = (request.params ?? {}) as Record<string, unknown>;
  const body = request.body;
  if (r.rest === 'body' && body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
    return body; // Not an object: the contract's schema says so.
  }
  const rest: Record<string, unknown> =
    r.rest === 'query' ? queryInput(r.call, request.query) : r.rest === 'body' ? { ...((body ?? {}) as Record<string, unknown>) } : {};
  for (const [field, source] of Object.entries(r.fields ?? {})) {
    if ('param' in source) {
      // The path names it; the same field in the query or body as well would be one of two answers.
      if (Object.hasOwn(rest, field)) {
        throw new PanoptesError('invalid_input', `${r.rest}: ${field} is given by the path (:${source.param})`, { where: field });
      }
      rest[field] = params[source.param];
    } else if (Object.hasOwn(rest, source.body)) {
      rest[field] = rest[source.body];
      delete rest[source.body];
    }
  }
  // A method that may be called with nothing (metrics, probe, ...) is, when the request carries nothing.
  return r.rest === undefined && r.fields === undefined ? undefined : rest;
}

/** A failure as the request named things: a renamed body field by its name, a whole-part refusal by its part. */
function restFailure(r: RestRoute, failure: Extract<Envelope<unknown>, { ok: false }>): Extract<Envelope<unknown>, { ok: false }> {
  let { message, where } = failure.error;
  for (const [field, source] of Object.entries(r.fields ?? {})) {
    if (!('body' in source)) continue;
    const named = new RegExp(`\\b${field}\\b`, 'g');
    message = message.replace(named, source.body);
    if (where !== undefined) where = where.replace(named, source.body);
  }
  if (where === undefined && failure.error.code === 'invalid_input' && r.rest !== undefined) where = r.rest;
  return { ok: false, error: { ...failure.error, message, ...(where === undefined ? {} : { where }) } };
}

/** `GET /runs/:id/responses.jsonl?scores=1`: each record with a `scores` object (other query keys are ignored, as before). */
const ResponsesJsonlQuerySchema = z.object({ scores: z.enum(['0', '1']).optional() });

export interface ApiRoutesOptions {
  dispatcher: ContractDispatcher;
  /** A run's export lines, for the streamed `responses.jsonl`. */
  exportLines: EngineService['exportLines'];
  /** Where `POST /runs` may read a manifest. */
  manifestRoots: ManifestRoots;
  tokenCheck: (presented: string | undefined) => boolean;
  /** The hook that caps queued runs (backpressure.ts). */
  queuedRunLimit: preHandlerAsyncHookHandler;
}

export const apiRoutes: FastifyPluginAsync<ApiRoutesOptions> = async (app, opts) => {
  const { dispatcher } = opts;
  app.addHook('onRequest', bearerAuth(opts.tokenCheck));
  const policy: TransportPolicy = {
    name: 'HTTP API',
    admit: (method, input) => opts.manifestRoots.confine(method, input),
    onInternal: (err, method) => app.log.error({ err, method }, 'request failed'),
  };

  for (const r of REST_ROUTES) {
    app.route({
      method: r.method,
      url: r.url,
      ...(r.responseSchema ? { schema: { response: { 200: r.responseSchema } } } : {}),
      ...(r.preHandler === 'queuedRunLimit' ? { preHandler: opts.queuedRunLimit } : {}),
      handler: async (request, reply) => {
        const answer = await dispatcher.call(r.call, restInput(r, request), policy);
        if (!answer.ok) return sendFailure(reply, restFailure(r, answer));
        // A presentation's refusal (a conflict) reaches the server's error handler, in the one error shape.
        const more: FollowUpCall = async (method, input) => (await dispatcher.invoke(method, input, policy)) as never;
        return r.present ? r.present(answer.value as never, reply, more) : answer.value;
      },
    });
  }

  app.get<{ Params: { id: string }; Querystring: unknown }>('/runs/:id/responses.jsonl', async (request, reply) => {
    const runId = request.params.id;
    const query = ResponsesJsonlQuerySchema.safeParse(request.query ?? {});
    if (!query.success) throw new PanoptesError('invalid_input', 'query.scores: expected 1 (each record with its scores) or 0', { where: 'scores' });
    const found = await dispatcher.call('getRun', { runId }, policy); // 404 before any byte is sent
    if (!found.ok) return sendFailure(reply, found);
    // Pulled line by line as the socket drains: memory stays flat whatever the run's size.
    const body = Readable.from(opts.exportLines(runId, query.data.scores === '1' ? 'jsonl_scores' : 'jsonl'), { objectMode: false });
    return reply
      .header('content-type', 'application/x-ndjson; charset=utf-8')
      .header('content-disposition', `attachment; filename="${runId}-responses.jsonl"`)
      .send(body);
  });

  // The run as inspect_ai logs, one tar of the folder `export --format inspect` writes (404 before any byte).
  app.get<{ Params: { id: string } }>('/runs/:id/inspect.tar', async (request, reply) => {
    const runId = request.params.id;
    const found = await dispatcher.call('getRun', { runId }, policy);
    if (!found.ok) return sendFailure(reply, found);
    return reply
      .header('content-type', INSPECT_ARCHIVE_TYPE)
      .header('content-disposition', `attachment; filename="${inspectArchiveName(runId)}"`)
      .send(await inspectArchive(dispatcher, runId));
  });
};

/**
 * `GET /health`: liveness without a token (what a supervisor polls), the router's posture, and
 * `frontier_ok`: whether at least two frontier models have a privacy-safe host routable now.
 */
export function healthRoutes(service: Pick<EngineService, 'posture'>, version: string, startedAt: number) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/health', async () => {
      const posture = await service.posture();
      return {
        status: 'ok' as const,
        version,
        uptime_s: Math.round((Date.now() - startedAt) / 1000),
        frontier_ok: posture.frontierOk,
        posture,
      };
    });
  };
}
