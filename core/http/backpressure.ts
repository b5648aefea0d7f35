/**
 * Backpressure for the HTTP API: answers "not now" early and cheaply instead of queueing work
 * without bound. Requests in flight beyond a cap get 503 + Retry-After before any body is read or
 * any handler runs (a slot is held until the response is closed, so a slow streamed export counts);
 * run creation beyond a cap on queued runs gets 429 + Retry-After.
 * Runs on: Node (core).
 */
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { sendError } from './errors.js';

/** An onRequest hook that sheds requests beyond `maxConcurrent` in flight with 503. */
export function concurrentRequestLimit(maxConcurrent: number, retryAfterS = 1): onRequestHookHandler {
  let inFlight = 0;
  return function limitConcurrency(request: FastifyRequest, reply: FastifyReply, done: () => void) {
    if (inFlight >= maxConcurrent) {
      request.log.warn({ in_flight: inFlight }, 'shedding a request: too many in flight');
      sendError(reply, 503, 'overloaded', `more than ${maxConcurrent} requests in flight; retry shortly`, { retryAfterS });
      return;
    }
    inFlight += 1;
    // 'close' fires once whether the response finished or the client went away.
    reply.raw.once('close', () => {
      inFlight -= 1;
    });
    done();
  };
}

/**
 * Caps runs waiting in the queue. Counts the queued runs the store holds plus creations still in
 * progress here, so a burst of POSTs cannot slip past the cap between the count and the insert.
 */
export class QueuedRunGate {
  private creating = 0;

  constructor(
    readonly maxQueued: number,
    private readonly countQueued: () => Promise<number>,
  ) {}

  /** Runs `create` if there is room; otherwise resolves to null without calling it. */
  async admit<T>(create: () => Promise<T>): Promise<T | null> {
    this.creating += 1;
    try {
      const queued = await this.countQueued();
      if (queued + this.creating > this.maxQueued) return null;
      return await create();
    } finally {
      this.creating -= 1;
    }
  }
}
