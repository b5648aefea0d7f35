/**
 * A run's own words and its fate: its name, notes and tags (saved together), archive or bring back,
 * and delete for good behind a confirmation. A queued or running run cannot be deleted: the button
 * says to cancel it first (the engine refuses it too, so no owner is cut off mid-write).
 * Runs on: renderer.
 */
import { useEffect, useState } from 'react';
import { RUN_NAME_MAX, RUN_NOTES_MAX } from '../../../core/common/input-bounds.js';
import { useClient } from '../api/client-context.js';
import type { RunSummary } from '../api/types.js';
import { formatDateTime } from '../format.js';
import { isTerminal } from '../state/freshness.js';
import { forgetRun, upsertRun } from '../state/app-store.js';
import { navigate } from '../state/hash-routes.js';

/** Tags as typed: comma-separated, trimmed, each once. */
function parseTags(text: string): string[] {
  return [...new Set(text.split(',').map((t) => t.trim()).filter(Boolean))];
}

export function RunManagePanel({ run }: { run: RunSummary }) {
  const client = useClient();
  const [name, setName] = useState(run.name ?? '');
  const [notes, setNotes] = useState(run.notes ?? '');
  const [tags, setTags] = useState(run.tags.join(', '));
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [busy, setBusy] = useState(false);
  // Another tab or process renamed it: the fields follow while they hold no edit of their own.
  useEffect(() => setName(run.name ?? ''), [run.name]);
  useEffect(() => setNotes(run.notes ?? ''), [run.notes]);
  useEffect(() => setTags(run.tags.join(', ')), [run.tags.join(',')]);

  const act = async (call: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      await call();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const save = () =>
    act(async () => {
      const updated = await client.call('describeRun', { runId: run.id, name, notes, tags: parseTags(tags) });
      upsertRun({ ...run, ...updated });
      setSaved(true);
    });
  const archive = (archived: boolean) =>
    act(async () => {
      const updated = await client.call('describeRun', { runId: run.id, archived });
      upsertRun({ ...run, ...updated });
    });
  const remove = () =>
    act(async () => {
      await client.call('deleteRun', { runId: run.id });
      forgetRun(run.id);
      navigate({ view: 'runs' });
    });
  const ended = isTerminal(run.status);

  return (
    <div className="card" data-testid="run-manage">
      <header className="card-header">
        <h2 className="h3">Name, notes and tags</h2>
        {run.archivedAt !== null ? <span className="muted">archived {formatDateTime(run.archivedAt)}: hidden from Runs unless shown</span> : null}
      </header>
      <form
        className="form"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <div className="field-row">
          <label className="field">
            <span className="field-label">Name</span>
            <input type="text" dir="auto" maxLength={RUN_NAME_MAX} value={name} placeholder={run.id} data-testid="run-name" onChange={(e) => setName(e.target.value)} />
          </label>
          <label className="field">
            <span className="field-label">Tags</span>
            <input type="text" dir="auto" value={tags} placeholder="comma-separated" data-testid="run-tags-input" onChange={(e) => setTags(e.target.value)} />
          </label>
        </div>
        <label className="field">
          <span className="field-label">Notes</span>
          <textarea dir="auto" rows={3} maxLength={RUN_NOTES_MAX} value={notes} data-testid="run-notes" onChange={(e) => setNotes(e.target.value)} />
        </label>
        <div className="form-actions">
          <button type="submit" className="button" disabled={busy} data-testid="save-run-details">
            Save
          </button>
          {saved ? <span role="status">Saved.</span> : null}
          <button type="button" className="button" disabled={busy} data-testid="archive-run" onClick={() => void archive(run.archivedAt === null)}>
            {run.archivedAt === null ? 'Archive' : 'Bring back from the archive'}
          </button>
          {!ended ? (
            <span className="muted" data-testid="delete-needs-cancel">
              To delete this run, cancel it first.
            </span>
          ) : confirmDelete ? (
            <span className="confirm">
              <span>Delete this run, its responses, scores and folder for good?</span>
              <button type="button" className="button danger" disabled={busy} data-testid="confirm-delete" onClick={() => void remove()}>
                Yes, delete
              </button>
              <button type="button" className="button" onClick={() => setConfirmDelete(false)}>
                Keep it
              </button>
            </span>
          ) : (
            <button type="button" className="button danger" data-testid="delete-run" onClick={() => setConfirmDelete(true)}>
              Delete…
            </button>
          )}
        </div>
        {error ? (
          <div className="field-error" role="alert" data-testid="run-manage-error">
            {error}
          </div>
        ) : null}
      </form>
    </div>
  );
}
