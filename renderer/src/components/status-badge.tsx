/**
 * A run's or a job's status as a coloured badge.
 * Runs on: renderer.
 */
import type { JobStatus, RunStatus } from '../api/types.js';

export function StatusBadge({ status }: { status: RunStatus | JobStatus }) {
  return (
    <span className={`badge status status-${status}`} data-testid="status">
      {status}
    </span>
  );
}
