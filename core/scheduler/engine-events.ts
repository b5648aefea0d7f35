/**
 * What the scheduler tells the outside world: which run, job or worker changed. Cheap to call at
 * any rate; the event hub coalesces and reads fresh snapshots when it publishes.
 * Runs on: Node (core).
 */
import type { JobId, RunId } from '../domain.js';

export interface EngineEvents {
  runChanged(runId: RunId): void;
  jobChanged(runId: RunId, jobId: JobId): void;
  workersChanged(): void;
}

export const NO_EVENTS: EngineEvents = {
  runChanged() {},
  jobChanged() {},
  workersChanged() {},
};
