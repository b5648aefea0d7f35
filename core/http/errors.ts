/**
 * How errors leave the HTTP API: one envelope, `{"error": {"code", "message", "where"?}}`, with a
 * status that says whose fault it was. Engine errors (PanoptesError) map by code; Fastify's own
 * (body too large, malformed JSON, bad content type) keep their 4xx status; anything else is a
 * 500 whose details go to the log, not to the client.
 * Runs on: Node (core).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { PanoptesError, type ErrorCode } from '../domain.js';

/** Codes the HTTP layer adds to the engine's own. */
export type HttpErrorCode =
  | ErrorCode
  | 'unauthorized'
  | 'forbidden'
  | 'payload_too_large'
  | 'overloaded'
  | 'too_many_queued_runs';

export interface HttpErrorBody {
  error: { code: HttpErrorCode; message: string; where?: string };
}

/** The status for each engine error code that a client can cause or should know about. */
const STATUS_BY_CODE: Partial<Record<ErrorCode, number>> = {
  invalid_input: 400,
  manifest_invalid: 400,
  bad_request: 400,
  not_found: 404,
  conflict: 409,
  cancelled: 409,
  rate_limited: 429,
  timeout: 504,
  /** A run asked to probe first, and a model was left with no host to call. */
  no_host: 503,
};

export function statusOf(err: PanoptesError): number {
  return STATUS_BY_CODE[err.code] ?? 500;
}

export function errorBody(code: HttpErrorCode, message: string, where?: string): HttpErrorBody {
  return { error: { code, message, ...(where === undefined ? {} : { where }) } };
}

/** Sends an error envelope; `retryAfterS` adds the Retry-After header backpressure answers carry. */
export function sendError(
  reply: FastifyReply,
  status: number,
  code: HttpErrorCode,
  message: string,
  opts: { where?: string; retryAfterS?: number } = {},
): FastifyReply {
  if (opts.retryAfterS !== undefined) reply.header('retry-after', String(opts.retryAfterS));
  return reply.code(status).send(errorBody(code, message, opts.where));
}

function codeForClientStatus(status: number): HttpErrorCode {
  if (status === 413) return 'payload_too_large';
  if (status === 404) return 'not_found';
  return 'bad_request';
}

/** Fastify's error handler for the whole server. */
export function handleError(err: FastifyError | PanoptesError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err instanceof PanoptesError) {
    const status = statusOf(err);
    if (status >= 500) request.log.error({ err }, 'request failed');
    const message = err.code === 'internal' ? 'internal error' : err.message;
    return sendError(reply, status, err.code, message, {
      ...(err.where === undefined ? {} : { where: err.where }),
      ...(status === 429 && err.retryAfterMs !== undefined ? { retryAfterS: Math.ceil(err.retryAfterMs / 1000) } : {}),
    });
  }
  const status = (err as FastifyError).statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return sendError(reply, status, codeForClientStatus(status), err.message);
  }
  request.log.error({ err }, 'request failed');
  return sendError(reply, 500, 'internal', 'internal error');
}

/** Unknown routes: the same envelope as every other error. */
export function handleNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(reply, 404, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}`);
}
