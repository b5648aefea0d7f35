/**
 * New run: a manifest (a path, an upload in the browser, or the native file dialog in the desktop
 * app) with its preview or its line-numbered errors; models from the catalog with provider, price
 * and privacy; epochs; concurrency; privacy mode. Each problem is explained next to its field,
 * and the Create button says how many calls the run will make. On first launch (no runs yet) the
 * form starts filled with the example manifest and mock models.
 * Runs on: renderer.
 */
import { useEffect, useRef, useState, type ChangeEvent } from 'react';
import { ApiError } from '../api/client.js';
import { useClient } from '../api/client-context.js';
import type { AppDefaults, CatalogModelEntry, ManifestPreview } from '../api/types.js';
import { Field } from '../components/field.js';
import { ErrorNotice } from '../components/notice.js';
import { useFetch } from '../components/use-fetch.js';
import { useRuns } from '../components/use-runs.js';
import { formatInt, formatPrice } from '../format.js';
import { navigate } from '../state/router.js';

type PrivacyMode = 'strict' | 'fallback' | 'off';
type FieldName = 'manifest' | 'models' | 'epochs' | 'concurrency';
type FieldErrors = Partial<Record<FieldName, string>>;

/** Catalogs longer than this get a filter box above the list. */
const MODEL_FILTER_FROM = 8;

const PRIVACY_HINTS: Record<PrivacyMode, string> = {
  strict: 'Only hosts that neither train on nor log prompts.',
  fallback: 'Private hosts first; others only when no private host can answer.',
  off: 'Any host in the catalog.',
};

/** A whole number within bounds, or null. */
function wholeNumber(text: string, min: number, max: number): number | null {
  if (!/^\s*\d+\s*$/.test(text)) return null;
  const n = Number(text);
  return n >= min && n <= max ? n : null;
}

/** Which field a server error names (`models[1]`, `epochs`, `manifest.jsonl:3`, ...). */
function fieldOf(err: ApiError): FieldName | null {
  const where = err.where ?? '';
  if (err.code === 'manifest_invalid' || where.startsWith('manifest')) return 'manifest';
  if (where.startsWith('models')) return 'models';
  if (where === 'epochs') return 'epochs';
  if (where === 'concurrency') return 'concurrency';
  return null;
}

function ManifestPreviewPanel({ preview }: { preview: ManifestPreview }) {
  if (preview.issues.length > 0) {
    return (
      <div className="manifest-issues" data-testid="manifest-issues">
        <p>
          <strong>This manifest has errors</strong> — fix these lines and check again:
        </p>
        <ul>
          {preview.issues.map((issue) => (
            <li key={`${issue.line}:${issue.message}`}>
              <span className="line-no">line {issue.line}</span> {issue.message}
            </li>
          ))}
        </ul>
        {preview.moreIssues ? <p className="muted">…and more.</p> : null}
      </div>
    );
  }
  return (
    <div className="manifest-preview" data-testid="manifest-preview">
      <p>
        <strong data-testid="vignette-count">{formatInt(preview.count)}</strong> vignettes
        {preview.preview.length > 0 ? `; the first ${preview.preview.length}:` : '.'}
      </p>
      <table className="table compact">
        <tbody>
          {preview.preview.map((v) => (
            <tr key={v.id}>
              <td className="mono nowrap">{v.id}</td>
              <td className="ellipsis" title={v.prompt}>
                {v.prompt}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ModelOption({ model, checked, onToggle }: { model: CatalogModelEntry; checked: boolean; onToggle: () => void }) {
  const providers = [...new Set(model.hosts.map((h) => h.provider))].join(', ');
  return (
    <label className={`model-option${checked ? ' checked' : ''}`} data-model={model.id}>
      <input type="checkbox" checked={checked} onChange={onToggle} />
      <span className="model-main">
        <span className="model-id">{model.id}</span>
        <span className="model-label">{model.label}</span>
      </span>
      <span className="model-meta">
        <span className="muted">{providers}</span>
        <span className="price" title="USD per million tokens, input / output">
          {formatPrice(model.inputPerMTok)} / {formatPrice(model.outputPerMTok)} per MTok
        </span>
        {model.privacySafe ? (
          <span className="badge badge-ok" title="A host that neither trains on nor logs prompts">
            private
          </span>
        ) : (
          <span className="badge badge-warn" title="Every host of this model trains on or logs prompts">
            trains on prompts
          </span>
        )}
        {model.available ? null : (
          <span className="badge badge-muted" title="No worker can run it now (for a hosted model: its API key is not set)">
            unavailable
          </span>
        )}
      </span>
    </label>
  );
}

export function NewRunView({ example }: { example: boolean }) {
  const client = useClient();
  const defaults = useFetch(() => client.call('defaults'), [client]);
  const catalog = useFetch(() => client.call('catalog'), [client]);
  const { runs, loaded: runsLoaded } = useRuns();

  const [pathText, setPathText] = useState('');
  const [uploadName, setUploadName] = useState<string | null>(null);
  const [preview, setPreview] = useState<ManifestPreview | null>(null);
  /** The path text the preview belongs to; a different text needs a new check. */
  const [checkedPath, setCheckedPath] = useState<string | null>(null);
  const [checkError, setCheckError] = useState<string | null>(null);
  const [checking, setChecking] = useState(false);
  const [models, setModels] = useState<string[]>([]);
  const [epochs, setEpochs] = useState('1');
  const [concurrency, setConcurrency] = useState('4');
  const [privacy, setPrivacy] = useState<PrivacyMode>('strict');
  const [modelFilter, setModelFilter] = useState('');
  const [serverErrors, setServerErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<Error | null>(null);
  const [creating, setCreating] = useState(false);
  const checks = useRef(0);
  const prefilled = useRef(false);

  /** Checks a manifest (a typed or chosen path, or an upload); `typed` is the path text it belongs to. */
  const check = async (load: () => Promise<ManifestPreview>, typed: string | null): Promise<void> => {
    const ticket = ++checks.current;
    setChecking(true);
    setServerErrors((e) => ({ ...e, manifest: undefined }));
    try {
      const result = await load();
      if (ticket !== checks.current) return;
      setPreview(result);
      setCheckError(null);
      const path = typed ?? result.path;
      setPathText(path);
      setCheckedPath(path);
    } catch (err) {
      if (ticket !== checks.current) return;
      setPreview(null);
      setCheckedPath(typed);
      setCheckError((err as Error).message);
    } finally {
      if (ticket === checks.current) setChecking(false);
    }
  };

  const fillExample = (d: AppDefaults) => {
    setUploadName(null);
    setModels(d.defaultModels);
    setEpochs(String(d.defaultEpochs));
    void check(() => client.call('checkManifest', { path: d.exampleManifest }), d.exampleManifest);
  };

  // The example fills the form when asked for (#/new/example) and on first launch.
  useEffect(() => {
    if (prefilled.current || !defaults.data || !runsLoaded) return;
    prefilled.current = true;
    if (example || runs.length === 0) fillExample(defaults.data);
  }, [defaults.data, runsLoaded, example, runs.length]);

  // A typed path is checked once typing pauses.
  useEffect(() => {
    const path = pathText.trim();
    if (path === '' || pathText === checkedPath) return;
    const timer = setTimeout(() => void check(() => client.call('checkManifest', { path }), pathText), 400);
    return () => clearTimeout(timer);
  }, [pathText, checkedPath]);

  const onUpload = async (e: ChangeEvent<HTMLInputElement>) => {
    const file = e.target.files?.[0];
    e.target.value = '';
    if (!file || !client.uploadManifest) return;
    setUploadName(file.name);
    await check(() => client.uploadManifest!(file), null);
  };

  const onChoose = async () => {
    const path = await client.chooseManifest?.();
    if (path) {
      setUploadName(null);
      await check(() => client.call('checkManifest', { path }), path);
    }
  };

  const catalogById = new Map((catalog.data ?? []).map((m) => [m.id, m]));
  const needle = modelFilter.trim().toLowerCase();
  // Models a worker can run now first (a fresh install: the mock models), the rest after, each in catalog order.
  const shownModels = [...(catalog.data ?? [])].sort((a, b) => Number(b.available) - Number(a.available)).filter(
    (m) =>
      needle === '' ||
      models.includes(m.id) ||
      [m.id, m.label, ...m.hosts.map((h) => h.provider)].some((t) => t.toLowerCase().includes(needle)),
  );
  const epochsN = wholeNumber(epochs, 1, 10_000);
  const concurrencyN = wholeNumber(concurrency, 1, 1024);
  const fresh = preview !== null && checkedPath === pathText;
  const blocked = privacy === 'strict' ? models.filter((m) => catalogById.get(m)?.privacySafe === false) : [];

  const errors: FieldErrors = {
    manifest:
      serverErrors.manifest ??
      (checkError && checkedPath === pathText
        ? checkError
        : fresh && preview.issues.length > 0
          ? `${preview.issues.length}${preview.moreIssues ? '+' : ''} line${preview.issues.length === 1 ? ' has an error' : 's have errors'}`
          : fresh && preview.count === 0
            ? 'the manifest has no vignettes'
            : undefined),
    models:
      serverErrors.models ??
      (catalog.data && models.length === 0
        ? 'choose at least one model'
        : blocked.length > 0
          ? `${blocked.join(', ')}: every host trains on prompts, so strict privacy refuses ${blocked.length === 1 ? 'it' : 'them'}. Choose another model, or privacy "fallback" or "off".`
          : undefined),
    epochs: serverErrors.epochs ?? (epochsN === null ? 'a whole number from 1 to 10,000' : undefined),
    concurrency: serverErrors.concurrency ?? (concurrencyN === null ? 'a whole number from 1 to 1,024' : undefined),
  };
  const ready =
    fresh && !checking && preview.issues.length === 0 && preview.count > 0 && models.length > 0 && epochsN !== null && concurrencyN !== null;
  const valid = ready && Object.values(errors).every((e) => e === undefined);
  const calls = fresh && epochsN !== null ? preview.count * models.length * epochsN : null;

  const create = async () => {
    if (!valid || !preview || epochsN === null || concurrencyN === null) return;
    setCreating(true);
    setFormError(null);
    try {
      const run = await client.call('createRun', {
        manifestPath: preview.path,
        models,
        epochs: epochsN,
        concurrency: concurrencyN,
        privacy,
      });
      navigate({ view: 'run', runId: run.id });
    } catch (err) {
      const field = err instanceof ApiError ? fieldOf(err) : null;
      if (field) setServerErrors({ [field]: (err as Error).message });
      else setFormError(err as Error);
    } finally {
      setCreating(false);
    }
  };

  const clearServerError = (field: FieldName) => setServerErrors((e) => ({ ...e, [field]: undefined }));

  return (
    <section className="view">
      <header className="view-header">
        <h1>New run</h1>
        {defaults.data ? (
          <button type="button" className="button" onClick={() => fillExample(defaults.data!)} data-testid="use-example">
            Use the example manifest and mock models
          </button>
        ) : null}
      </header>
      <ErrorNotice error={defaults.error ?? catalog.error} title="Could not load the form" />
      <form
        className="card form"
        onSubmit={(e) => {
          e.preventDefault();
          void create();
        }}
      >
        <Field
          label="Manifest"
          name="manifest"
          error={errors.manifest}
          hint={
            checking ? 'Checking…' : 'A JSONL file: one {"id", "prompt"} object per line.'
          }
        >
          <div className="row">
            <input
              type="text"
              className="grow mono"
              placeholder="/path/to/manifest.jsonl"
              aria-label="Manifest path"
              data-testid="manifest-path"
              value={pathText}
              onChange={(e) => {
                setPathText(e.target.value);
                setUploadName(null);
                clearServerError('manifest');
              }}
            />
            {client.chooseManifest ? (
              <button type="button" className="button" onClick={() => void onChoose()}>
                Choose file…
              </button>
            ) : client.uploadManifest ? (
              <label className="button file-button">
                Upload a file…
                <input type="file" accept=".jsonl,.ndjson,.json,.txt" data-testid="manifest-upload" onChange={(e) => void onUpload(e)} />
              </label>
            ) : null}
          </div>
          {uploadName ? <div className="field-hint">Uploaded {uploadName}; kept in the data folder for this run.</div> : null}
          {preview && fresh ? <ManifestPreviewPanel preview={preview} /> : null}
        </Field>

        <Field label="Models" name="models" error={errors.models} hint="Each chosen model answers every vignette, every epoch.">
          {(catalog.data?.length ?? 0) > MODEL_FILTER_FROM ? (
            <div className="row">
              <input
                type="search"
                className="grow"
                placeholder="Filter the catalog by id, name or provider"
                aria-label="Filter models"
                data-testid="model-filter"
                value={modelFilter}
                onChange={(e) => setModelFilter(e.target.value)}
              />
              <span className="muted nowrap">
                {models.length} of {catalog.data!.length} chosen
              </span>
            </div>
          ) : null}
          <div className="model-list" data-testid="model-list">
            {shownModels.map((m) => (
              <ModelOption
                key={m.id}
                model={m}
                checked={models.includes(m.id)}
                onToggle={() => {
                  clearServerError('models');
                  setModels((cur) => (cur.includes(m.id) ? cur.filter((x) => x !== m.id) : [...cur, m.id]));
                }}
              />
            ))}
            {catalog.loading ? <p className="muted">Loading the catalog…</p> : null}
          </div>
        </Field>

        <div className="field-row">
          <Field label="Epochs" name="epochs" error={errors.epochs} hint="Repeats of the whole sweep, to see how consistent each model is.">
            <input
              type="number"
              min={1}
              max={10000}
              step={1}
              data-testid="epochs"
              value={epochs}
              onChange={(e) => {
                setEpochs(e.target.value);
                clearServerError('epochs');
              }}
            />
          </Field>
          <Field label="Concurrency" name="concurrency" error={errors.concurrency} hint="Jobs (model × epoch) of this run in flight at once.">
            <input
              type="number"
              min={1}
              max={1024}
              step={1}
              data-testid="concurrency"
              value={concurrency}
              onChange={(e) => {
                setConcurrency(e.target.value);
                clearServerError('concurrency');
              }}
            />
          </Field>
          <Field label="Privacy" name="privacy" hint={PRIVACY_HINTS[privacy]}>
            <select value={privacy} data-testid="privacy" onChange={(e) => setPrivacy(e.target.value as PrivacyMode)}>
              <option value="strict">strict</option>
              <option value="fallback">fallback</option>
              <option value="off">off</option>
            </select>
          </Field>
        </div>

        <ErrorNotice error={formError} title="The run was not created" />
        <div className="form-actions">
          <button type="submit" className="button primary large" disabled={!valid || creating} data-testid="create-run">
            {creating
              ? 'Creating…'
              : calls !== null && valid
                ? `Create run · ${formatInt(calls)} call${calls === 1 ? '' : 's'}`
                : 'Create run'}
          </button>
          {calls !== null && valid && preview ? (
            <span className="muted">
              {formatInt(preview.count)} vignettes × {models.length} model{models.length === 1 ? '' : 's'} × {epochsN} epoch
              {epochsN === 1 ? '' : 's'}
            </span>
          ) : (
            <span className="muted">Fill in the fields above to create the run.</span>
          )}
        </div>
      </form>
    </section>
  );
}
