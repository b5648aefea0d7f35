/**
 * The one back-off rule: doubling from the base, jitter within its range, the cap, and a server's
 * Retry-After honoured as a floor (capped, or honoured past the cap for a host's rest).
 * Runs on: Node (tests).
 */
import { describe, expect, it } from 'vitest';
import { backoffDelay, pause } from '../../core/concurrency/backoff.js';

describe('backoffDelay', () => {
  it('doubles from the base with each failure, up to the cap', () => {
    const policy = { baseMs: 100, maxMs: 1000 };
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(policy, n))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('draws the jitter from its range, and caps after it', () => {
    const policy = { baseMs: 100, maxMs: 1000, jitter: [0.5, 1.5] as const };
    expect(backoffDelay(policy, 1, undefined, () => 0)).toBe(50);
    expect(backoffDelay(policy, 1, undefined, () => 0.999999)).toBeCloseTo(150, 3);
    expect(backoffDelay(policy, 4, undefined, () => 0.999999)).toBe(1000);
  });

  it('never waits less than Retry-After, and caps it unless told to honour it', () => {
    expect(backoffDelay({ baseMs: 100, maxMs: 1000 }, 1, 700)).toBe(700);
    expect(backoffDelay({ baseMs: 100, maxMs: 1000 }, 1, 5000)).toBe(1000);
    expect(backoffDelay({ baseMs: 100, maxMs: 1000, honourLongRetryAfter: true }, 1, 5000)).toBe(5000);
  });
});

describe('pause', () => {
  it('ends early, without throwing, when its signal aborts', async () => {
    const ac = new AbortController();
    const started = performance.now();
    setTimeout(() => ac.abort(), 20);
    await pause(60_000, ac.signal);
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(ac.signal.aborted).toBe(true);
  });
});
