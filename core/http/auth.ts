/**
 * Bearer-token authentication for the HTTP API (and, reused, the browser bridge): the header is
 * read here, the compare is the one constant-time token check of `core/token-check.ts` (a
 * wrong-length token is a plain 401, never a 500).
 * Runs on: Node (core).
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { vouchFor } from '../concurrency/guest-sockets.js';
import { PanoptesError } from '../domain.js';
import { tokenCheck, type TokenCheck } from '../token-check.js';
import { sendError } from './errors.js';

/** Shorter tokens are refused: the token is the only thing between a web page and the API. */
export const MIN_TOKEN_LENGTH = 16;

/** A fresh random token: 32 bytes, base64url (43 characters). */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Refuses a token too short to guard anything, naming where it came from. */
export function assertUsableToken(token: string, where: string): void {
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new PanoptesError('invalid_input', `${where}: a token needs at least ${MIN_TOKEN_LENGTH} characters`, { where });
  }
}

/** Returns a checker that answers whether a presented token is the expected one, in constant time. */
export function createTokenCheck(expected: string): TokenCheck {
  assertUsableToken(expected, 'token');
  return tokenCheck(expected);
}

/** The token of an `Authorization: Bearer <token>` header, if the request carries one. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1];
}

/** An onRequest hook answering 401 unless the request carries the right bearer token. */
export function bearerAuth(check: TokenCheck): onRequestHookHandler {
  return function authenticate(request: FastifyRequest, reply: FastifyReply, done: () => void) {
    if (check(bearerToken(request))) {
      vouchFor(request.raw.socket);
      done();
      return;
    }
    reply.header('www-authenticate', 'Bearer realm="panoptes"');
    sendError(reply, 401, 'unauthorized', 'missing or wrong bearer token (Authorization: Bearer <token>)');
  };
}
