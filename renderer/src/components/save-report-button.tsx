/**
 * Save report, in Results: the run's report as one self-contained HTML page (what `panoptes report
 * --html` writes), for the scorer, reducer and slicing the view shows — through the save dialog in
 * the desktop app, as a download in the browser. Says where it went, or why it could not.
 * Runs on: renderer.
 */
import { useState } from 'react';
import type { SaveReportInput, SaveReportOutcome } from '../api/client.js';
import { useClient } from '../api/client-context.js';
import { formatInt } from '../format.js';
import { ErrorNotice } from './notice.js';

export function SaveReportButton({ input }: { input: SaveReportInput }) {
  const client = useClient();
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<SaveReportOutcome | null>(null);
  const [error, setError] = useState<Error | null>(null);

  const save = async () => {
    setBusy(true);
    setError(null);
    setOutcome(null);
    try {
      setOutcome(await client.saveReport(input));
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  const listed = outcome ? ` (${formatInt(outcome.rows)} of ${formatInt(outcome.total)} vignettes listed)` : '';
  return (
    <span className="save-report">
      <button type="button" className="button" disabled={busy} onClick={() => void save()} data-testid="save-report">
        {busy ? 'Saving…' : client.kind === 'desktop' ? 'Save report…' : 'Download report'}
      </button>
      {outcome?.kind === 'saved' ? (
        <span className="small" role="status" data-testid="save-report-done">
          Saved to <span className="mono">{outcome.path}</span>
          {listed}
        </span>
      ) : outcome?.kind === 'download' ? (
        <span className="small" role="status" data-testid="save-report-done">
          Downloading <span className="mono">{outcome.fileName}</span>
          {listed}
        </span>
      ) : null}
      <ErrorNotice error={error} title="The report could not be saved" />
    </span>
  );
}
