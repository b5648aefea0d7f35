/**
 * A progress bar with its percentage, coloured by the run's status.
 * Runs on: renderer.
 */
import { formatPercent } from '../format.js';

export function ProgressBar({ fraction, status, label }: { fraction: number; status?: string; label?: string }) {
  const clamped = Math.min(Math.max(fraction, 0), 1);
  return (
    <div className="progress" data-status={status}>
      <div
        className="progress-track"
        role="progressbar"
        aria-label={label ?? 'progress'}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.round(clamped * 100)}
      >
        <div className="progress-fill" style={{ transform: `scaleX(${clamped})` }} />
      </div>
      <span className="progress-text">{formatPercent(clamped)}</span>
    </div>
  );
}
