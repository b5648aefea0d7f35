/**
 * The HTTP API's routes, each declared with its schema and each a thin call into the ControlService
 * (the one implementation of the contract): the coordinator's routes (runs, /stats) plus paging, a
 * streamed export, per-run stats, and the router's metrics, roster and probes. Everything here needs the bearer token;
 * `healthRoutes` is the one route outside it.
 * Runs on: Node (core).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { PanoptesError } from '../domain.js';
import {
  CompareRunsInputSchema,
  CreateRunInputSchema,
  ListRunsInputSchema,
  MetricsInputSchema,
  ProbeInputSchema,
  ReportInputSchema,
  ResponsesInputSchema,
  RetryRunInputSchema,
  RunIdInputSchema,
  ScoreDetailInputSchema,
  ScoreMatrixInputSchema,
  ScoreRunInputSchema,
} from '../service/contract.js';
import type { EngineService } from '../service/engine.js';
import { bearerAuth } from './auth.js';
import type { QueuedRunGate } from './backpressure.js';
import { sendError } from './errors.js';
import type { ManifestRoots } from './manifest-roots.js';
import { STATS_JSON_SCHEMA } from './stats-schema.js';
import { toRunStats, toStatsShape } from './stats-shapes.js';
import { fromQueryString, type ZodTypeProvider } from './zod-validation.js';

/** `POST /runs`: the contract's input, with the manifest path under its original name `manifest`. */
export const CreateRunBodySchema = CreateRunInputSchema.omit({ manifestPath: true }).extend({
  manifest: z.string({ error: 'give the manifest path' }).min(1, 'give the manifest path'),
});

const RunParamsSchema = z.object({ id: RunIdInputSchema.shape.runId }).strict();
const ListRunsQuerySchema = fromQueryString(ListRunsInputSchema);
const ResponsesQuerySchema = fromQueryString(ResponsesInputSchema.omit({ runId: true }));
const MetricsQuerySchema = fromQueryString(MetricsInputSchema);
const ScoreBodySchema = ScoreRunInputSchema.omit({ runId: true });
const ReportQuerySchema = fromQueryString(ReportInputSchema.omit({ runId: true }));
const MatrixQuerySchema = fromQueryString(ScoreMatrixInputSchema.omit({ runId: true }));
const VignetteParamsSchema = z.object({ id: RunIdInputSchema.shape.runId, vignetteId: ScoreDetailInputSchema.shape.vignetteId }).strict();
/** `/runs/:id/compare/:other`: run A is the path's run, run B the other (diff = B − A). */
const CompareParamsSchema = z.object({ id: CompareRunsInputSchema.shape.runA, other: CompareRunsInputSchema.shape.runB }).strict();
const CompareQuerySchema = fromQueryString(CompareRunsInputSchema.omit({ runA: true, runB: true }));

/** How long a client turned away by the queued-run cap should wait, in seconds. */
const QUEUE_FULL_RETRY_AFTER_S = 5;

export interface ApiRoutesOptions {
  service: EngineService;
  /** Where `POST /runs` may read a manifest. */
  manifestRoots: ManifestRoots;
  tokenCheck: (presented: string | undefined) => boolean;
  queuedRunGate: QueuedRunGate;
}

export const apiRoutes: FastifyPluginAsync<ApiRoutesOptions> = async (instance, opts) => {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { service, queuedRunGate } = opts;
  app.addHook('onRequest', bearerAuth(opts.tokenCheck));

  app.post('/runs', { schema: { body: CreateRunBodySchema } }, async (request, reply) => {
    const { manifest, ...rest } = request.body;
    const manifestPath = await opts.manifestRoots.resolve(manifest, 'manifest');
    const run = await queuedRunGate.admit(() => service.createRun({ manifestPath, ...rest }));
    if (run === null) {
      return sendError(reply, 429, 'too_many_queued_runs', `${queuedRunGate.maxQueued} runs are queued already; retry later`, {
        retryAfterS: QUEUE_FULL_RETRY_AFTER_S,
      });
    }
    return reply.code(201).header('location', `/runs/${run.id}`).send(run);
  });

  app.get('/runs', { schema: { querystring: ListRunsQuerySchema } }, async (request) => {
    return { runs: await service.listRuns(request.query) };
  });

  app.get('/runs/:id', { schema: { params: RunParamsSchema } }, async (request) => {
    return service.getRun({ runId: request.params.id });
  });

  app.post('/runs/:id/cancel', { schema: { params: RunParamsSchema } }, async (request) => {
    const run = await service.cancelRun({ runId: request.params.id });
    // Cancelling a cancelled run is a no-op (200); a run that ended otherwise cannot be cancelled.
    if (run.status !== 'cancelled') {
      throw new PanoptesError('conflict', `run ${run.id} is ${run.status} already; nothing to cancel`, { where: 'id' });
    }
    return run;
  });

  // The app's retry button: scope "failed" finishes the run's failed and cancelled jobs' missing records; "all" starts it anew.
  app.post(
    '/runs/:id/retry',
    { schema: { params: RunParamsSchema, body: RetryRunInputSchema.omit({ runId: true }) } },
    async (request) => service.retryRun({ runId: request.params.id, scope: request.body.scope }),
  );

  app.get('/runs/:id/responses', { schema: { params: RunParamsSchema, querystring: ResponsesQuerySchema } }, async (request) => {
    return service.responses({ runId: request.params.id, ...request.query });
  });

  app.get('/runs/:id/responses.jsonl', { schema: { params: RunParamsSchema } }, async (request, reply) => {
    const runId = request.params.id;
    await service.getRun({ runId }); // 404 before any byte is sent
    // Pulled line by line as the socket drains: memory stays flat whatever the run's size.
    const body = Readable.from(service.exportLines(runId, 'jsonl'), { objectMode: false });
    return reply
      .header('content-type', 'application/x-ndjson; charset=utf-8')
      .header('content-disposition', `attachment; filename="${runId}-responses.jsonl"`)
      .send(body);
  });

  app.get('/runs/:id/stats', { schema: { params: RunParamsSchema } }, async (request) => {
    return toRunStats(await service.getRun({ runId: request.params.id }));
  });

  /** Scores a run with a scoring file's scorers (records as they land, or a finished run again): 202 with the scoring status. */
  app.post('/runs/:id/score', { schema: { params: RunParamsSchema, body: ScoreBodySchema } }, async (request, reply) => {
    return reply.code(202).send(await service.scoreRun({ runId: request.params.id, scorers: request.body.scorers }));
  });

  app.get('/runs/:id/report', { schema: { params: RunParamsSchema, querystring: ReportQuerySchema } }, async (request) => {
    return service.report({ runId: request.params.id, ...request.query });
  });

  // Two runs of one manifest, paired by vignette id, model by model: what the app's Compare runs shows.
  app.get('/runs/:id/compare/:other', { schema: { params: CompareParamsSchema, querystring: CompareQuerySchema } }, async (request) => {
    return service.compareRuns({ runA: request.params.id, runB: request.params.other, ...request.query });
  });

  app.get('/runs/:id/scores/matrix', { schema: { params: RunParamsSchema, querystring: MatrixQuerySchema } }, async (request) => {
    return service.scoreMatrix({ runId: request.params.id, ...request.query });
  });

  app.get('/runs/:id/scores/vignettes/:vignetteId', { schema: { params: VignetteParamsSchema } }, async (request) => {
    return service.scoreDetail({ runId: request.params.id, vignetteId: request.params.vignetteId });
  });

  app.get('/stats', { schema: { response: { 200: STATS_JSON_SCHEMA } } }, async () => {
    return toStatsShape(await service.stats());
  });

  app.get('/metrics', { schema: { querystring: MetricsQuerySchema } }, async (request) => {
    return service.metrics(request.query);
  });

  app.get('/roster', async () => service.roster());

  app.post('/probe', { schema: { body: ProbeInputSchema.optional() } }, async (request) => {
    return service.probe(request.body ?? {});
  });
};

/**
 * `GET /health`: liveness without a token (what a supervisor polls), the router's posture, and
 * `frontier_ok`: whether at least two frontier models have a privacy-safe host routable now.
 */
export function healthRoutes(service: EngineService, version: string, startedAt: number) {
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
