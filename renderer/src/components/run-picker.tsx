/**
 * Chooses the run a view shows (Stats, Responses, Export): a select of the runs, newest first,
 * optionally with "All runs", each by its name (when it has one), id, manifest, status and the date
 * it was created. The choice lives in the URL, so it survives a reload.
 * Runs on: renderer.
 */
import type { RunSummary } from '../api/types.js';
import { baseName, formatDateTime } from '../format.js';

/** A run as the picker lists it: a run of last week reads with its date, not "10:02". */
export function runLabel(run: RunSummary): string {
  const name = run.name !== null && run.name !== '' ? `${run.name} · ` : '';
  return `${name}${run.id} · ${baseName(run.manifestPath)} · ${run.status} · ${formatDateTime(run.createdAt)}`;
}

export function RunPicker({
  runs,
  value,
  onChange,
  allowAll = false,
  label = 'Run',
  testId = 'run-picker',
}: {
  runs: readonly RunSummary[];
  value: string | null;
  onChange: (runId: string | null) => void;
  allowAll?: boolean;
  label?: string;
  testId?: string;
}) {
  return (
    <label className="inline-field">
      <span>{label}</span>
      <select
        data-testid={testId}
        value={value ?? ''}
        onChange={(e) => onChange(e.target.value === '' ? null : e.target.value)}
      >
        {allowAll ? <option value="">All runs</option> : null}
        {!allowAll && value === null ? (
          <option value="" disabled>
            Choose a run…
          </option>
        ) : null}
        {runs.map((run) => (
          <option key={run.id} value={run.id}>
            {runLabel(run)}
          </option>
        ))}
      </select>
    </label>
  );
}
