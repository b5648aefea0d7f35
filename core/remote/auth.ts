/**
 * The worker token check: both sides hashed with sha256 and compared in constant time, so neither
 * the token's content nor its length leaks through timing.
 * Runs on: Node (core).
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export class TokenCheck {
  private readonly expected: Buffer;

  constructor(token: string) {
    this.expected = digest(token);
  }

  matches(given: string): boolean {
    return timingSafeEqual(digest(given), this.expected);
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
