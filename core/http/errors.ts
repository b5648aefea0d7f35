/**
 * How errors leave the HTTP server: ONE body for every route, the API's and the browser bridge's,
 * and for the server's own guards: `{"ok": false, "error": {"code", "message", "retryable",
 * "where"?}}` — the contract's failed `Envelope` — with a status that says whose fault it was.
 * Engine errors map by code; Fastify's own (body too large, malformed JSON, bad content type) keep
 * their 4xx status, and what Node's parser refuses (408, 431, malformed HTTP) gets the same body;
 * anything else is a 500 whose details go to the log, not to the client.
 * Runs on: Node (core).
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { PanoptesError, wireError, type ErrorCode } from '../domain.js';
import type { Envelope } from '../service/contract.js';

/** Codes the HTTP layer adds to the engine's own. */
export type HttpErrorCode =
  | ErrorCode
  | 'unauthorized'
  | 'forbidden'
  | 'payload_too_large'
  | 'request_timeout'
  | 'headers_too_large'
  | 'overloaded'
  | 'too_many_queued_runs';

export interface HttpErrorBody {
  ok: false;
  error: { code: HttpErrorCode; message: string; retryable: boolean; where?: string; retryAfterMs?: number };
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
  /** Insufficient Storage: the server's disk is full, nothing was stored. */
  disk_full: 507,
};

export function statusOf(code: ErrorCode): number {
  return STATUS_BY_CODE[code] ?? 500;
}

/** Sends an error the server raises itself (a guard, a limit); `retryAfterS` adds Retry-After and makes it retryable. */
export function sendError(
  reply: FastifyReply,
  status: number,
  code: HttpErrorCode,
  message: string,
  opts: { where?: string; retryAfterS?: number } = {},
): FastifyReply {
  if (opts.retryAfterS !== undefined) reply.header('retry-after', String(opts.retryAfterS));
  const error = { code, message, retryable: opts.retryAfterS !== undefined, ...(opts.where === undefined ? {} : { where: opts.where }) };
  return reply.code(status).send({ ok: false, error } satisfies HttpErrorBody);
}

/** Sends a contract call's failure: the status its code implies, Retry-After for a rate limit. */
export function sendFailure(reply: FastifyReply, failure: Extract<Envelope<unknown>, { ok: false }>): FastifyReply {
  const status = statusOf(failure.error.code);
  if (status === 429 && failure.error.retryAfterMs !== undefined) reply.header('retry-after', String(Math.ceil(failure.error.retryAfterMs / 1000)));
  return reply.code(status).send(failure satisfies HttpErrorBody);
}

function codeForClientStatus(status: number): HttpErrorCode {
  if (status === 413) return 'payload_too_large';
  if (status === 404) return 'not_found';
  return 'bad_request';
}

/** Fastify's error handler for the whole server. */
export function handleError(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const status = (err as FastifyError).statusCode;
  if (!(err instanceof PanoptesError) && status !== undefined && status >= 400 && status < 500) {
    return sendError(reply, status, codeForClientStatus(status), err.message);
  }
  const failure = { ok: false as const, error: wireError(err) };
  if (statusOf(failure.error.code) >= 500) request.log.error({ err }, 'request failed');
  return sendFailure(reply, failure);
}

/** Unknown routes: the same body as every other error. */
export function handleNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(reply, 404, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}`);
}

/** Errors Node's HTTP parser raises before a request reaches Fastify, each with its status and sentence. */
const CLIENT_ERRORS: Record<string, { status: number; code: HttpErrorCode; message: string; retryable: boolean }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'request_timeout', message: 'the request did not arrive in time: send it again, whole', retryable: true },
  HPE_HEADER_OVERFLOW: { status: 431, code: 'headers_too_large', message: "the request's headers are larger than the server accepts", retryable: false },
};

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP parser refuses (a request too slow to arrive,
 * headers too large, malformed HTTP) answered in the same body as every other error, where Node
 * and Fastify would each send their own; then the connection is closed, as Node does.
 */
export function handleClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const known = CLIENT_ERRORS[err.code ?? ''] ?? { status: 400, code: 'bad_request' as const, message: 'malformed HTTP request', retryable: false };
  const body = JSON.stringify({ ok: false, error: { code: known.code, message: known.message, retryable: known.retryable } } satisfies HttpErrorBody);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${known.status} ${STATUS_CODES[known.status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
