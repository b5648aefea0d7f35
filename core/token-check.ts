/**
 * The one check of a presented secret against the expected one, for the HTTP API's bearer token and
 * the worker listener's token alike: both sides are hashed with sha256 before a constant-time
 * compare, so the compare takes the same time whatever the token's length or content (a
 * wrong-length token is a plain refusal, never an exception), and the expected token is not kept
 * in memory as it was given.
 * Runs on: Node (core).
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** Answers whether a presented token is `expected`, in constant time; `undefined` never matches. */
export type TokenCheck = (presented: string | undefined) => boolean;

export function tokenCheck(expected: string): TokenCheck {
  const expectedHash = sha256(expected);
  return (presented) => presented !== undefined && timingSafeEqual(sha256(presented), expectedHash);
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
