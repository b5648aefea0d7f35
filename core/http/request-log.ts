/**
 * One log line per request, written when the response is done: method, path, status, latency (and
 * the run id on a run's routes). Fastify's own pair of lines ("incoming request", "request
 * completed" with the whole request object) is replaced; the query string is left out because it
 * may carry search text from a run's responses.
 * Runs on: Node (core).
 */
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

export class RequestLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'req_id' });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const onRunRoute = request.routeOptions.url?.startsWith('/runs/:id') ?? false;
    const runId = onRunRoute ? (request.params as { id?: string } | undefined)?.id : undefined;
    const line = {
      method: request.method,
      path: request.url.split('?')[0],
      status: reply.statusCode,
      latency_ms: Math.round(reply.elapsedTime * 10) / 10,
      run_id: runId,
    };
    if (error) request.log.warn({ ...line, err: error.message }, 'request');
    else request.log.info(line, 'request');
  }
}
