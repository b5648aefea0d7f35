/**
 * The HTTP API's defaults: address, body and connection limits, timeouts. In a file of their own
 * so that `panoptes serve --help` can print them without loading the server.
 * Runs on: Node (core).
 */
import { connectionCaps } from '../concurrency/guest-sockets.js';

export const HTTP_DEFAULTS = {
  host: '127.0.0.1',
  bodyLimit: 1024 * 1024,
  maxConcurrent: 64,
  maxQueuedRuns: 100,
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  timeoutCheckIntervalMs: 1_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: connectionCaps().total,
  maxGuestConnections: connectionCaps().guests,
} as const;
