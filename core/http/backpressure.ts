/**
 * Backpressure for the HTTP API: answers "not now" early and cheaply instead of queueing work
 * without bound. Requests in flight beyond a cap get 503 + Retry-After before any body is read or
 * any handler runs (a slot is held until the response is closed, so a slow streamed export counts);
 * run creation beyond a cap on queued runs gets 429 + Retry-After, before the run is validated or stored.
 * Runs on: Node (core).
 */
import type { FastifyReply, FastifyRequest, onRequestHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import { sendError } from './errors.js';

/** An onRequest hook that sheds requests beyond `maxConcurrent` in flight with 503. */
export function concurrentRequestLimit(maxConcurrent: number, retryAfterS = 1): onRequestHookHandler {
  let inFlight = 0;
  return function limitConcurrency(request: FastifyRequest, reply: FastifyReply, done: () => void) {
    // A WebSocket upgrade is answered at once and then lives as long as its tab: counted, a few
    // open tabs would shed every request. Open connections are bounded by the connection caps.
    if (request.headers.upgrade !== undefined) {
      done();
      return;
    }
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
 * A route's hook that caps runs waiting in the queue with 429. It counts the queued runs the store
 * holds plus creations still in progress here (each until its response closes), so a burst of
 * POSTs cannot slip past the cap between the count and the insert.
 */
export function queuedRunLimit(maxQueued: number, countQueued: () => Promise<number>, retryAfterS = 5): preHandlerAsyncHookHandler {
  let creating = 0;
  return async function limitQueuedRuns(_request: FastifyRequest, reply: FastifyReply) {
    creating += 1;
    reply.raw.once('close', () => {
      creating -= 1;
    });
    const queued = await countQueued();
    if (queued + creating > maxQueued) {
      return sendError(reply, 429, 'too_many_queued_runs', `${maxQueued} runs are queued already; retry later`, { retryAfterS });
    }
    return undefined;
  };
}
