/**
 * Bearer-token authentication for the HTTP API (and, reused, the browser bridge). The presented
 * token and the expected one are both hashed with sha256 before a constant-time compare, so the
 * compare takes the same time whatever the token's length or content (a wrong-length token is a
 * plain 401, never a 500) and the expected token is not kept in memory as it was given.
 * Runs on: Node (core).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { vouchFor } from '../concurrency/guest-sockets.js';
import { PanoptesError } from '../domain.js';
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

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Returns a checker that answers whether a presented token is the expected one, in constant time. */
export function createTokenCheck(expected: string): (presented: string | undefined) => boolean {
  assertUsableToken(expected, 'token');
  const expectedHash = sha256(expected);
  return (presented) => presented !== undefined && timingSafeEqual(sha256(presented), expectedHash);
}

/** The token of an `Authorization: Bearer <token>` header, if the request carries one. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1];
}

/** An onRequest hook answering 401 unless the request carries the right bearer token. */
export function bearerAuth(check: (presented: string | undefined) => boolean): onRequestHookHandler {
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
