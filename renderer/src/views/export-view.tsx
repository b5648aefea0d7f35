/**
 * Export: a run's records as JSONL (the responses.jsonl shape) or CSV — exactly one line per
 * (model, epoch, vignette), with its scores when asked — or its inspect_ai logs (a folder; one tar of it in the browser): a
 * download in the browser, the save dialog in the desktop app.
 * Runs on: renderer.
 */
import { useEffect, useState } from 'react';
import type { ExportFormat, ExportOutcome } from '../api/client.js';
import { useClient } from '../api/client-context.js';
import { EmptyState, ErrorNotice } from '../components/notice.js';
import { RunPicker } from '../components/run-picker.js';
import { StatusBadge } from '../components/status-badge.js';
import { useFetch } from '../components/use-fetch.js';
import { useRuns } from '../components/use-runs.js';
import { formatInt } from '../format.js';
import { useAppStore } from '../state/app-store.js';
import { isTerminal } from '../state/freshness.js';
import { navigate } from '../state/hash-routes.js';

const FORMATS: Array<{ value: ExportFormat; label: string; hint: string }> = [
  { value: 'jsonl', label: 'JSONL', hint: 'one JSON object per line, as in responses.jsonl' },
  { value: 'csv', label: 'CSV', hint: 'for spreadsheets: one row per record' },
  { value: 'inspect', label: 'inspect', hint: "inspect_ai logs, one per model, for inspect's viewer (a folder; a tar of it in the browser)" },
];

export function ExportView({ runId }: { runId: string | null }) {
  const client = useClient();
  const { runs, loaded } = useRuns();
  const run = useAppStore((s) => (runId === null ? undefined : s.runs[runId]));
  const detail = useFetch(runId === null ? null : () => client.call('getRun', { runId }), [client, runId]);
  const [format, setFormat] = useState<ExportFormat>('jsonl');
  const [withScores, setWithScores] = useState(false);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<ExportOutcome | null>(null);
  const [error, setError] = useState<Error | null>(null);

  useEffect(() => {
    if (runId === null && runs[0]) navigate({ view: 'export', runId: runs[0].id });
  }, [runId, runs]);
  useEffect(() => {
    setOutcome(null);
    setError(null);
  }, [runId, format]);

  const exportNow = async () => {
    if (runId === null) return;
    setBusy(true);
    setError(null);
    try {
      setOutcome(await client.exportRun(runId, format, { scores: format !== 'inspect' && withScores }));
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="view">
      <header className="view-header">
        <h1>Export</h1>
        <RunPicker runs={runs} value={runId} onChange={(id) => id && navigate({ view: 'export', runId: id })} />
      </header>
      {loaded && runs.length === 0 ? <EmptyState title="No runs yet" /> : null}
      {run ? (
        <div className="card form">
          <p>
            Run <span className="mono">{run.id}</span> <StatusBadge status={run.status} /> holds{' '}
            <strong data-testid="export-count">{formatInt(run.calls)}</strong> records.
            {isTerminal(run.status) ? '' : ' It is still going: an export now holds the records landed so far.'}
          </p>
          <fieldset className="field">
            <legend className="field-label">Format</legend>
            {FORMATS.map((f) => (
              <label key={f.value} className="radio">
                <input type="radio" name="format" value={f.value} checked={format === f.value} onChange={() => setFormat(f.value)} />
                <strong>{f.label}</strong> <span className="muted">— {f.hint}</span>
              </label>
            ))}
          </fieldset>
          {format !== 'inspect' ? (
            <label className="checkbox">
              <input type="checkbox" data-testid="export-scores" checked={withScores} onChange={(e) => setWithScores(e.target.checked)} />{' '}
              Score columns{' '}
              <span className="muted">
                {format === 'csv'
                  ? '— one per scorer of the run: pass, fail or the graded value (empty while unscored)'
                  : '— each record with a "scores" object, a key per scorer of the run: value, passed, kind and severity (null while unscored)'}
              </span>
            </label>
          ) : null}
          <div className="form-actions">
            <button type="button" className="button primary" disabled={busy} onClick={() => void exportNow()} data-testid="export-button">
              {client.kind === 'desktop' ? `Save as ${format.toUpperCase()}…` : `Download ${format.toUpperCase()}`}
            </button>
          </div>
          <ErrorNotice error={error} title="The export failed" />
          {outcome?.kind === 'saved' ? (
            <div className="notice notice-ok" data-testid="export-done">
              Saved {formatInt(outcome.lines)} {format === 'inspect' ? 'samples' : 'lines'} to <span className="mono">{outcome.path}</span>
            </div>
          ) : outcome?.kind === 'download' ? (
            <div className="notice notice-ok" data-testid="export-done">
              Downloading <span className="mono">{outcome.fileName}</span>
            </div>
          ) : null}
          {detail.data ? (
            <p className="muted small">
              The run's own append-only log is kept at <span className="mono">{detail.data.responsesPath}</span>
              {client.kind === 'browser' ? ' on the machine that runs Panoptes' : ''}.
            </p>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
