/**
 * Results of a run: what its scores say about its models. The leaderboard (mean and 95 % interval
 * per model, as an error-bar chart and a table), every pair of models compared on the vignettes
 * both answered (for a run posed until decided, each pair's anytime-valid decision), the leaderboard per value of a metadata key, and the vignette × model matrix whose
 * cells open the responses side by side with their scores. It follows the run's scoring live: each
 * pushed scoring event fetches the report and the matrix again (at most twice a second). A stored
 * run is scored here with a new scoring file, without calling any model again.
 * Runs on: renderer.
 */
import { useState } from 'react';
import { ApiError } from '../api/client.js';
import { useClient } from '../api/client-context.js';
import type { EpochReducer, ScoreReport, ScoringStatus } from '../api/types.js';
import { DecisionTable } from '../components/decision-table.js';
import { byMeanDescending, ModelScoreTable } from '../components/model-score-table.js';
import { EmptyState, ErrorNotice } from '../components/notice.js';
import { PairMatrix } from '../components/pair-matrix.js';
import { RunPicker } from '../components/run-picker.js';
import { ScoreDetailDialog } from '../components/score-detail-dialog.js';
import { ScoreIntervalChart } from '../components/score-interval-chart.js';
import { ScoreMatrix } from '../components/score-matrix.js';
import { ScorerAndReducerFields } from '../components/score-view-fields.js';
import { ScoringEditor } from '../components/scoring-editor.js';
import { parseScoringText } from '../components/scoring-text.js';
import { ScoringStatusTable } from '../components/scoring-status-table.js';
import { SaveReportButton } from '../components/save-report-button.js';
import { VariantsNote } from '../components/variants-note.js';
import { useFetch } from '../components/use-fetch.js';
import { useRuns } from '../components/use-runs.js';
import { useThrottled } from '../components/use-throttled.js';
import { formatInt } from '../format.js';
import { loadedScoring, scoredCount, useAppStore } from '../state/app-store.js';
import { navigate, routeHref } from '../state/hash-routes.js';

/** Live refreshes of the report and the matrix: at most one per this many ms. */
const REFRESH_MS = 500;
/** The metadata keys offered for slicing are those of the run's first records (manifests are uniform). */
const METADATA_SAMPLE = 200;

function ScoreRunForm({ runId, onScored, startOpen }: { runId: string; onScored: (status: ScoringStatus) => void; startOpen: boolean }) {
  const client = useClient();
  const [open, setOpen] = useState(startOpen);
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const parsed = text.trim() === '' ? null : parseScoringText(text);

  const submit = async () => {
    if (!parsed?.config) return;
    setBusy(true);
    setError(null);
    try {
      onScored(await client.call('scoreRun', { runId, scorers: parsed.config }));
      setText('');
      setOpen(false);
    } catch (err) {
      const where = err instanceof ApiError && err.where ? `${err.where}: ` : '';
      setError(`${where}${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  if (!open) {
    return (
      <button type="button" className="button" data-testid="open-score-form" onClick={() => setOpen(true)}>
        Score with a scoring file…
      </button>
    );
  }
  return (
    <form
      className="form score-run-form"
      aria-label="Score this run"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <p className="muted small">
        Scores the responses this run already holds; no model is called again. An unchanged scorer is not scored twice; a
        changed one becomes a new version beside the old.
      </p>
      <ScoringEditor text={text} onChange={setText} testId="score-run-scoring" />
      {parsed?.error || error ? (
        <div className="field-error" role="alert" data-testid="score-run-error">
          {parsed?.error ?? error}
        </div>
      ) : null}
      <div className="form-actions">
        <button type="submit" className="button primary" disabled={!parsed?.config || busy} data-testid="score-run">
          {busy ? 'Scoring…' : 'Score this run'}
        </button>
        <button type="button" className="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Leaderboard({ report }: { report: ScoreReport }) {
  const models = byMeanDescending(report.models);
  return (
    <div className="card" data-testid="leaderboard">
      <header className="card-header">
        <h2>Leaderboard</h2>
        <span className="muted small">
          {report.scorer} <span className="mono">{report.scorer_version.slice(0, 10)}</span> · {report.kind === 'pass_fail' ? 'pass / fail' : 'graded'} ·{' '}
          {report.epochs} epoch{report.epochs === 1 ? '' : 's'} reduced by {report.reducer}
          {report.by ? ` · standard errors clustered by ${report.by}` : ''}
        </span>
      </header>
      <VariantsNote variants={report.variants} />
      {report.pairwise ? (
        <p className="small" data-testid="pairwise-baseline">
          Pairwise against the baseline <strong>{report.pairwise.baseline}</strong>: a win counts 1, a tie 0.5, a loss 0, so a mean is the win
          rate against the baseline <span className="muted">(0.5: as good as it; the baseline's own row is 0.5 by definition)</span>
        </p>
      ) : null}
      {report.warnings.length > 0 ? (
        <ul className="small" data-testid="report-warnings">
          {report.warnings.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      ) : null}
      {report.judges ? (
        <p className="small" data-testid="judge-agreement">
          Judges {report.judges.judges.join(', ')} · agreement (Krippendorff's α):{' '}
          <strong>{report.judges.alpha === null ? 'not enough to compare yet' : report.judges.alpha.toFixed(3)}</strong>
          <span className="muted"> (1 = full agreement, 0 = no better than chance)</span>
        </p>
      ) : null}
      {models.length === 0 ? (
        <p className="muted">No scores yet.</p>
      ) : (
        <div className="results-pair">
          <ScoreIntervalChart
            testId="leaderboard-chart"
            title={`Mean ${report.scorer} score per model`}
            entries={models.map((m) => ({ label: m.model, mean: m.mean, ci95: m.ci95, colorIndex: report.models.indexOf(m) }))}
          />
          <ModelScoreTable models={models} testId="leaderboard-table" caption="Leaderboard: mean score per model with its 95 % confidence interval" />
        </div>
      )}
    </div>
  );
}

function Slices({ report }: { report: ScoreReport }) {
  if (!report.by || !report.slices) return null;
  return (
    <div className="card" data-testid="slices">
      <header className="card-header">
        <h2>By {report.by}</h2>
        <span className="muted small">the leaderboard for each value of the metadata key</span>
      </header>
      <div className="slices">
        {report.slices.map((slice) => (
          <section key={slice.value} className="slice" data-slice={slice.value} aria-label={`${report.by} = ${slice.value}`}>
            <h3>
              {report.by} = <span className="mono">{slice.value}</span>
            </h3>
            <ModelScoreTable
              models={byMeanDescending(slice.models)}
              testId={`slice-table-${slice.value}`}
              caption={`Leaderboard where ${report.by} is ${slice.value}`}
            />
          </section>
        ))}
      </div>
    </div>
  );
}

function RunResults({ runId }: { runId: string }) {
  const client = useClient();
  const live = useAppStore((s) => s.scoring[runId]);
  const fetchedStatus = useFetch(async () => {
    const fetched = await client.call('scoringStatus', { runId });
    loadedScoring(fetched);
    return fetched;
  }, [client, runId]);
  const status = live ?? fetchedStatus.data;
  const names = [...new Set((status?.scorers ?? []).map((s) => s.name))];
  const [scorerChoice, setScorer] = useState<string | null>(null);
  const scorer = scorerChoice !== null && names.includes(scorerChoice) ? scorerChoice : (names[0] ?? null);
  const [reducer, setReducer] = useState<EpochReducer>('mean');
  const [by, setBy] = useState('');
  const [openVignette, setOpenVignette] = useState<string | null>(null);
  const refresh = useThrottled(status ? scoredCount(status) : 0, REFRESH_MS);
  const sample = useFetch(() => client.call('responses', { runId, limit: METADATA_SAMPLE }), [client, runId, refresh > 0]);
  const metadataKeys = [...new Set((sample.data?.items ?? []).flatMap((r) => Object.keys(r.metadata ?? {})))].sort();

  const report = useFetch(
    scorer === null ? null : () => client.call('report', { runId, scorer, reducer, ...(by === '' ? {} : { by }) }),
    [client, runId, scorer, reducer, by, refresh],
  );

  const pending = status?.scorers.filter((s) => s.name === scorer).reduce((n, s) => n + s.pending, 0) ?? 0;

  return (
    <>
      <div className="card">
        <header className="card-header">
          <h2>Scoring</h2>
          {status ? <ScoreRunForm runId={runId} onScored={loadedScoring} startOpen={status.scorers.length === 0} /> : null}
        </header>
        <ErrorNotice error={fetchedStatus.error} title="Could not load the scoring progress" />
        {status && status.scorers.length > 0 ? <ScoringStatusTable status={status} /> : null}
        {status && status.scorers.length === 0 ? (
          <p className="muted" data-testid="no-scorers">
            This run has no scorers yet. Give it a scoring file above: its responses are scored where they are stored.
          </p>
        ) : null}
      </div>

      {scorer !== null ? (
        <>
          <div className="filters card" role="group" aria-label="What the results show">
            <ScorerAndReducerFields
              testIdPrefix="results"
              names={names}
              scorer={scorer}
              onScorer={setScorer}
              reducer={reducer}
              onReducer={setReducer}
            />
            <label className="inline-field">
              <span>Slice by</span>
              <select data-testid="results-by" value={by} onChange={(e) => setBy(e.target.value)}>
                <option value="">nothing (the whole run)</option>
                {metadataKeys.map((k) => (
                  <option key={k} value={k}>
                    metadata {k}
                  </option>
                ))}
              </select>
            </label>
            <SaveReportButton input={{ runId, scorer, reducer, ...(by === '' ? {} : { by }) }} />
            {pending > 0 ? (
              <span className="badge badge-warn" role="status" data-testid="scores-pending">
                {formatInt(pending)} response{pending === 1 ? '' : 's'} still to score: figures will move
              </span>
            ) : null}
          </div>
          <ErrorNotice error={report.error} title="Could not make the report" />
          {report.data ? (
            <>
              <Leaderboard report={report.data} />
              {report.data.anytime ? (
                <div className="card" data-testid="anytime-decision">
                  <header className="card-header">
                    <h2>Posed until decided</h2>
                    <span className="muted small">
                      each pair&apos;s anytime-valid interval (α {report.data.anytime.alpha} over the pairs); a fixed-n interval is not valid after a stop the data chose, so none is shown
                    </span>
                  </header>
                  <DecisionTable decision={report.data.anytime} running={false} />
                </div>
              ) : report.data.models.length >= 2 ? (
                <div className="card" data-testid="pairs">
                  <header className="card-header">
                    <h2>Model against model</h2>
                    <span className="muted small">
                      row − column, paired on the vignettes both answered; better or worse only when the Holm-adjusted p of the test shown is below 0.05
                    </span>
                  </header>
                  <PairMatrix models={byMeanDescending(report.data.models).map((m) => m.model)} pairs={report.data.pairs} testId="pair-matrix" />
                </div>
              ) : null}
              <Slices report={report.data} />
            </>
          ) : null}
          <div className="card">
            <header className="card-header">
              <h2>Vignettes</h2>
              <span className="muted small">click a cell for the responses side by side, with every score</span>
            </header>
            <ScoreMatrix runId={runId} scorer={scorer} reducer={reducer} refresh={refresh} onOpen={setOpenVignette} />
          </div>
          {openVignette !== null ? <ScoreDetailDialog runId={runId} vignetteId={openVignette} onClose={() => setOpenVignette(null)} /> : null}
        </>
      ) : null}
    </>
  );
}

export function ResultsView({ runId }: { runId: string | null }) {
  const { runs } = useRuns();
  return (
    <section className="view">
      <header className="view-header">
        <h1>Results</h1>
        <div className="actions">
          <RunPicker runs={runs} value={runId} onChange={(id) => navigate({ view: 'results', runId: id })} />
          {runId !== null ? (
            <>
              <a className="button" href={routeHref({ view: 'run', runId })}>
                Run
              </a>
              <a className="button" href={routeHref({ view: 'compare', runA: runId, runB: null })} data-testid="compare-with">
                Compare with another run
              </a>
            </>
          ) : null}
        </div>
      </header>
      {runId === null ? (
        <EmptyState title="Choose a run">
          <p>The results of a scored run: each model's mean score with its 95 % confidence interval, and every pair of models compared.</p>
        </EmptyState>
      ) : (
        <RunResults key={runId} runId={runId} />
      )}
    </section>
  );
}
