/**
 * What a run summary says about progress: calls planned and made, the fraction done, time spent.
 * A run makes one call per (vignette, model, epoch): vignetteCount x jobCount.
 * Runs on: renderer.
 */
import type { RunSummary } from '../api/types.js';

export function plannedCalls(run: RunSummary): number {
  return run.vignetteCount * run.jobCount;
}

export function progressFraction(run: RunSummary): number {
  const planned = plannedCalls(run);
  if (planned === 0) return run.status === 'done' ? 1 : 0;
  return run.calls / planned;
}

/** Time from start to finish, or to `now` while the run goes on; null before it starts. */
export function elapsedMs(run: RunSummary, now: number): number | null {
  if (run.startedAt === null) return null;
  return (run.finishedAt ?? now) - run.startedAt;
}
