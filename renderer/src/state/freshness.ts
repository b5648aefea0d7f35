/**
 * Which of two snapshots of a run or a job is newer. A fetched snapshot and a pushed event travel
 * on different channels (HTTP and WebSocket), so an older one may arrive last; progress only moves
 * forward (attempts, then status, then records landed), so that order decides. A run's status moves
 * back to queued when it is retried, resumed or taken over: its restart count comes first.
 * Runs on: renderer.
 */
import type { Job, JobStatus, RunStatus, RunSummary } from '../api/types.js';

const JOB_STAGE: Record<JobStatus, number> = { pending: 0, running: 1, done: 2, failed: 2, cancelled: 2 };
const RUN_STAGE: Record<RunStatus, number> = { queued: 0, running: 1, done: 2, failed: 2, cancelled: 2 };

function compareTuples(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/** True when `next` is at least as far along as `current` (so it replaces it). */
export function jobIsNotOlder(next: Job, current: Job): boolean {
  return (
    compareTuples(
      [next.attempt, JOB_STAGE[next.status], next.vignettesDone],
      [current.attempt, JOB_STAGE[current.status], current.vignettesDone],
    ) >= 0
  );
}

export function runIsNotOlder(next: RunSummary, current: RunSummary): boolean {
  return (
    compareTuples(
      [next.restarts, RUN_STAGE[next.status], next.doneCount + next.failedCount, next.calls],
      [current.restarts, RUN_STAGE[current.status], current.doneCount + current.failedCount, current.calls],
    ) >= 0
  );
}

export function isTerminal(status: RunStatus): boolean {
  return RUN_STAGE[status] === 2;
}
