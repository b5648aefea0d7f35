/**
 * One back-off rule for every retry loop (a vignette's call, a job's redelivery, a scorer's retry,
 * a worker's reconnect, a host's rest): the wait doubles from a base with each failure, may be
 * jittered so that callers that failed together do not come back together, is capped, and never
 * undercuts what the server asked for (`Retry-After`). `pause` is the wait itself, cut short by an
 * abort.
 * Runs on: Node (core).
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface BackoffPolicy {
  /** The wait after the first failure, in ms. */
  baseMs: number;
  /** The longest wait, in ms, jitter included. */
  maxMs: number;
  /** The wait is multiplied by a uniform draw from [low, high] (default [1, 1]: no jitter). */
  jitter?: readonly [low: number, high: number] | undefined;
  /**
   * A `Retry-After` longer than `maxMs` is honoured (a host's rest) rather than capped (a loop
   * that must come back within its cap, and lets the next layer wait longer).
   */
  honourLongRetryAfter?: boolean | undefined;
}

/**
 * The wait after `failures` failed tries (1 = the first). `retryAfterMs`: what the server asked
 * for; `random`: a source of [0, 1) (tests fix it).
 */
export function backoffDelay(
  policy: BackoffPolicy,
  failures: number,
  retryAfterMs?: number | undefined,
  random: () => number = Math.random,
): number {
  const [low, high] = policy.jitter ?? [1, 1];
  const grown = policy.baseMs * 2 ** Math.max(0, failures - 1) * (low + (high - low) * random());
  const wait = Math.max(Math.min(policy.maxMs, grown), retryAfterMs ?? 0);
  return policy.honourLongRetryAfter ? wait : Math.min(policy.maxMs, wait);
}

/** Waits `ms`, or less when `signal` aborts; never throws (the caller checks the signal). */
export async function pause(ms: number, signal?: AbortSignal | undefined): Promise<void> {
  if (ms <= 0 || signal?.aborted) return;
  await sleep(ms, undefined, signal ? { signal } : undefined).catch(() => undefined);
}
