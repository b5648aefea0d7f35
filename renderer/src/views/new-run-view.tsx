/**
 * New run: a manifest (a path, an upload in the browser, or the native file dialog in the desktop
 * app) with its preview or its line-numbered errors; models from the catalog with provider, price
 * and privacy; epochs; concurrency; privacy mode. Each problem is explained next to its field,
 * and the Create button says how many calls the run will make and, before it is pressed, about
 * what they will cost. The run's cache and sampling options (temperature, max tokens, seed) are
 * here too. A model no worker can run cannot be chosen (the field says why). A field shows its
 * error once the user has acted on it, not on a blank form. On first launch (no runs yet) the
 * form starts filled with the example manifest and mock models. Optionally, a scoring file: its
 * scorers score each response as it lands.
 * Or a repository (a folder, a .tar.gz, a diff) packed into a manifest: repository-source.tsx.
 * Runs on: renderer.
 */
import { useEffect, useRef, useState, type ChangeEvent } from 'react';
import { CONCURRENCY, EPOCHS, MAX_TOKENS, TEMPERATURE, wholeRangeText } from '../../../core/common/input-bounds.js';
import { ApiError } from '../api/client.js';
import { useClient } from '../api/client-context.js';
import type { AppDefaults, CatalogModelEntry, ManifestPreview, PrivacyMode } from '../api/types.js';
import { CacheSamplingFields } from '../components/cache-sampling-fields.js';
import { Field, controlProps } from '../components/field.js';
import { ManifestPreviewPanel } from '../components/manifest-preview-panel.js';
import { ModelOption, UNAVAILABLE_WHY } from '../components/model-option.js';
import { fieldOf, optionalNumber, samplingOf, wholeNumber, type FieldErrors, type FieldName } from '../components/new-run-fields.js';
import { ErrorNotice } from '../components/notice.js';
import { EstimatePanel } from '../components/run-estimate-panel.js';
import { applyDraft } from '../components/run-again-draft.js';
import { WholeCacheNotice } from '../components/whole-cache-notice.js';
import { ScoringEditor } from '../components/scoring-editor.js';
import { StagedRunFields, stagedRunInput, type StagedRunChoice } from '../components/staged-run-fields.js';
import { parseScoringText } from '../components/scoring-text.js';
import { UntilDecidedFields, type UntilDecidedChoice } from '../components/until-decided-fields.js';
import { PlanPanel } from '../components/plan-panel.js';
import { RepositorySource } from '../components/repository-source.js';
import { useFetch } from '../components/use-fetch.js';
import { useRuns } from '../components/use-runs.js';
import { formatInt } from '../format.js';
import { estimateRun } from '../state/run-estimate.js';
import { estimateScoring } from '../state/scoring-estimate.js';
import { navigate } from '../state/hash-routes.js';

/** Catalogs longer than this get a filter box above the list. */
const MODEL_FILTER_FROM = 8;

const PRIVACY_HINTS: Record<PrivacyMode, string> = {
  strict: 'Only hosts that neither train on nor log prompts.',
  fallback: 'Private hosts first; others only when no private host can answer.',
  off: 'Any host in the catalog.',
};

export function NewRunView({ example, again }: { example: boolean; again: string | null }) {
  const client = useClient();
  const defaults = useFetch(() => client.call('defaults'), [client]);
  const catalog = useFetch(() => client.call('catalog'), [client]);
  // What each model typically answered so far: the output side of the price estimate.
  const history = useFetch(() => client.call('stats'), [client]);
  const { runs, loaded: runsLoaded } = useRuns();
  // Run again: the run's settings fill the form, to change before Create.
  const draft = useFetch(again === null ? null : () => client.call('runDraft', { runId: again }), [client, again]);

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
  const [useCache, setUseCache] = useState(true);
  const [shareCache, setShareCache] = useState(false);
  const [temperature, setTemperature] = useState('');
  const [maxTokens, setMaxTokens] = useState('');
  const [seed, setSeed] = useState('');
  const [scoringText, setScoringText] = useState('');
  const [runName, setRunName] = useState('');
  const [untilDecided, setUntilDecided] = useState<UntilDecidedChoice>(undefined);
  const [staged, setStaged] = useState<StagedRunChoice>({});
  const [stagedDraft, setStagedDraft] = useState<StagedRunChoice | null>(null);
  /** Fields the user has acted on: only those show what is missing (a blank form greets no one with errors). */
  const [touched, setTouched] = useState<ReadonlySet<FieldName>>(new Set());
  const touch = (field: FieldName) => setTouched((t) => (t.has(field) ? t : new Set([...t, field])));
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
    // The demo's scorers too: the example's first Results page has a leaderboard.
    setScoringText(d.exampleScoring);
    void check(() => client.call('checkManifest', { path: d.exampleManifest }), d.exampleManifest);
  };

  // The example fills the form when asked for (#/new/example) and on first launch.
  useEffect(() => {
    if (prefilled.current || !defaults.data || !runsLoaded || (again !== null && !draft.data)) return;
    prefilled.current = true;
    if (draft.data) {
      applyDraft(draft.data, { setModels, setEpochs, setConcurrency, setPrivacy, setUseCache, setShareCache, setTemperature, setMaxTokens, setSeed, setScoringText, setRunName, setStaged: setStagedDraft });
      void check(() => client.call('checkManifest', { path: draft.data!.manifestPath }), draft.data.manifestPath);
    } else if (example || runs.length === 0) fillExample(defaults.data);
  }, [defaults.data, runsLoaded, example, runs.length, draft.data]);

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
  const epochsN = wholeNumber(epochs, EPOCHS.min, EPOCHS.max);
  const concurrencyN = wholeNumber(concurrency, CONCURRENCY.min, CONCURRENCY.max);
  const fresh = preview !== null && checkedPath === pathText;
  const scoring = scoringText.trim() === '' ? null : parseScoringText(scoringText);
  const blocked = privacy === 'strict' ? models.filter((m) => catalogById.get(m)?.privacySafe === false) : [];
  const unavailable = models.filter((m) => catalogById.get(m)?.available === false);
  const temperatureN = optionalNumber(temperature, TEMPERATURE.min, TEMPERATURE.max, false);
  const maxTokensN = optionalNumber(maxTokens, MAX_TOKENS.min, MAX_TOKENS.max, true);
  const seedN = optionalNumber(seed, -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true);

  const errors: FieldErrors = {
    manifest:
      serverErrors.manifest ??
      (checkError && checkedPath === pathText
        ? checkError
        : fresh && preview.issues.length > 0
          ? `${formatInt(preview.issueCount)} line${preview.issueCount === 1 ? ' has an error' : 's have errors'}`
          : fresh && preview.count === 0
            ? 'the manifest has no vignettes'
            : undefined),
    models:
      serverErrors.models ??
      (catalog.data && models.length === 0 && touched.has('models')
        ? 'choose at least one model'
        : unavailable.length > 0
          ? `${unavailable.join(', ')}: ${UNAVAILABLE_WHY}. Untick ${unavailable.length === 1 ? 'it' : 'them'} to create the run.`
          : blocked.length > 0
          ? `${blocked.join(', ')}: every host trains on prompts, so strict privacy refuses ${blocked.length === 1 ? 'it' : 'them'}. Choose another model, or privacy "fallback" or "off".`
          : undefined),
    epochs: serverErrors.epochs ?? (epochsN === null ? wholeRangeText(EPOCHS) : undefined),
    concurrency: serverErrors.concurrency ?? (concurrencyN === null ? wholeRangeText(CONCURRENCY) : undefined),
    temperature: serverErrors.temperature ?? (temperatureN === 'invalid' ? `a number from ${TEMPERATURE.min} to ${TEMPERATURE.max}, or blank for the model default` : undefined),
    maxTokens: serverErrors.maxTokens ?? (maxTokensN === 'invalid' ? `${wholeRangeText(MAX_TOKENS)}, or blank` : undefined),
    seed: serverErrors.seed ?? (seedN === 'invalid' ? 'a whole number, or blank' : undefined),
    scoring: serverErrors.scoring ?? scoring?.error ?? undefined,
  };
  const ready =
    fresh && !checking && preview.issues.length === 0 && preview.count > 0 && models.length > 0 && epochsN !== null && concurrencyN !== null;
  const valid = ready && Object.values(errors).every((e) => e === undefined) && untilDecided !== 'invalid';
  const calls = fresh && epochsN !== null ? preview.count * models.length * epochsN : null;
  const chosen = models.map((m) => catalogById.get(m)).filter((m): m is CatalogModelEntry => m !== undefined);
  const estimate =
    fresh && preview.issues.length === 0 && epochsN !== null && chosen.length > 0
      ? estimateRun({
          vignettes: preview.count,
          promptChars: preview.promptChars,
          epochs: epochsN,
          models: chosen,
          history: history.data?.models ?? [],
          maxTokens: typeof maxTokensN === 'number' ? maxTokensN : null,
        })
      : null;
  const planned =
    fresh && epochsN !== null
      ? { manifestPath: preview.path, vignettes: preview.count, models, epochs: epochsN, privacy, useCache, shareCache, sampling: samplingOf(temperatureN, maxTokensN, seedN) }
      : null;
  const missing = [
    !fresh || preview.issues.length > 0 || preview.count === 0 ? 'a valid manifest' : null,
    models.length === 0 ? 'at least one model' : null,
  ].filter((m): m is string => m !== null);

  const create = async () => {
    if (!valid || !preview || epochsN === null || concurrencyN === null) return;
    if (temperatureN === 'invalid' || maxTokensN === 'invalid' || seedN === 'invalid') return;
    const sampling = samplingOf(temperatureN, maxTokensN, seedN);
    setCreating(true);
    setFormError(null);
    try {
      const run = await client.call('createRun', {
        manifestPath: preview.path,
        models,
        epochs: epochsN,
        concurrency: concurrencyN,
        privacy,
        ...(useCache ? {} : { skipPromptCache: true }),
        ...(useCache && shareCache ? { shareCacheAcrossEpochs: true } : {}),
        ...stagedRunInput(staged, sampling),
        ...(scoring?.config ? { scorers: scoring.config } : {}),
        ...(runName.trim() === '' ? {} : { name: runName.trim() }),
        ...(untilDecided ? { untilDecided } : {}),
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
          group
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
              aria-describedby="field-manifest-note"
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
          {uploadName && fresh && preview ? (
            <div className="field-hint" data-testid="upload-note">
              {preview.kept
                ? `Uploaded ${uploadName}; a copy is kept in the data folder, and runs read that copy.`
                : `Uploaded ${uploadName}; not kept, since it has errors: fix the file and upload it again.`}
            </div>
          ) : null}
          {preview && fresh ? <ManifestPreviewPanel preview={preview} /> : null}
        </Field>
        <RepositorySource models={models} onPacked={(path) => void check(() => client.call('checkManifest', { path }), path)} />

        <Field label="Models" name="models" group error={errors.models} hint="Each chosen model answers every vignette, every epoch.">
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
                  touch('models');
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
              {...controlProps('epochs', errors.epochs)}
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
              {...controlProps('concurrency', errors.concurrency)}
              value={concurrency}
              onChange={(e) => {
                setConcurrency(e.target.value);
                clearServerError('concurrency');
              }}
            />
          </Field>
          <Field label="Privacy" name="privacy" hint={PRIVACY_HINTS[privacy]}>
            <select value={privacy} data-testid="privacy" {...controlProps('privacy')} onChange={(e) => setPrivacy(e.target.value as PrivacyMode)}>
              <option value="strict">strict</option>
              <option value="fallback">fallback</option>
              <option value="off">off</option>
            </select>
          </Field>
        </div>

        <CacheSamplingFields
          useCache={useCache}
          setUseCache={setUseCache}
          shareCache={shareCache}
          setShareCache={setShareCache}
          temperature={temperature}
          setTemperature={setTemperature}
          maxTokens={maxTokens}
          setMaxTokens={setMaxTokens}
          seed={seed}
          setSeed={setSeed}
          errors={errors}
          clearServerError={clearServerError}
        />

        <StagedRunFields onChange={setStaged} errors={serverErrors} clearServerError={clearServerError} initial={stagedDraft} />

        <Field
          label="Scoring"
          name="scoring"
          group
          error={errors.scoring}
          hint="Optional. Scorers score each response as it lands, from the vignettes' target and metadata; the run's Results view shows what they say, with confidence intervals."
        >
          <ScoringEditor
            text={scoringText}
            testId="new-run-scoring"
            onChange={(text) => {
              setScoringText(text);
              clearServerError('scoring');
            }}
          />
        </Field>

        <UntilDecidedFields scorers={scoring?.config?.scorers.map((sc) => sc.name) ?? []} models={models.length} onChange={setUntilDecided} />
        <PlanPanel models={models} manifestPath={fresh ? preview.path : null} judges={scoring?.config?.scorers.flatMap((sc) => (sc.type === 'judge' ? sc.judges : [])) ?? []} />

        <Field label="Name" name="name" hint="Optional: what lists and headers call the run (its id otherwise); editable later.">
          <input type="text" dir="auto" maxLength={200} data-testid="new-run-name" {...controlProps('name')} value={runName} onChange={(e) => setRunName(e.target.value)} />
        </Field>

        {estimate ? <EstimatePanel estimate={estimate} scoring={scoring?.config ? estimateScoring({ config: scoring.config, sweep: estimate, vignettes: preview?.count ?? 0, epochs: epochsN ?? 1, catalog: catalogById, history: history.data?.models ?? [] }) : null} /> : null}
        <WholeCacheNotice planned={planned} runs={runs} turnCacheOff={() => setUseCache(false)} />
        <ErrorNotice error={formError} title="The run was not created" />
        <div className="form-actions">
          <button type="submit" className="button primary large" disabled={!valid || creating} data-testid="create-run">
            {creating
              ? 'Creating…'
              : calls !== null && valid
                ? `Create run · ${untilDecided ? 'at most ' : ''}${formatInt(calls)} call${calls === 1 ? '' : 's'}`
                : 'Create run'}
          </button>
          {calls !== null && valid && preview ? (
            <span className="muted">
              {formatInt(preview.count)} vignettes × {models.length} model{models.length === 1 ? '' : 's'} × {epochsN} epoch
              {epochsN === 1 ? '' : 's'}
            </span>
          ) : (
            <span className="muted" data-testid="create-missing">
              {missing.length > 0 ? `To create the run, choose ${missing.join(' and ')}.` : 'Fix the fields marked above to create the run.'}
            </span>
          )}
        </div>
      </form>
    </section>
  );
}
