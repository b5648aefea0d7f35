/**
 * Compare runs: two runs over the same manifest, paired by vignette id. For each model both ran,
 * run B's epoch-reduced scores against run A's: each side's mean with its 95 % interval (an
 * error-bar chart and a table), and the paired difference B − A with its interval and p-value,
 * higher or lower only where its Holm-adjusted p is below 0.05, else "not distinguishable" (or "too
 * few vignettes to compare" under the report's minimum). Whether a new prompt, a new model version or
 * a new scorer moved the needle, the vignettes' own difficulty cancels out.
 * Runs on: renderer.
 */
import { useState } from 'react';
import { useClient } from '../api/client-context.js';
import type { EpochReducer, ModelScore, PairComparison, RunComparison } from '../api/types.js';
import { byMeanDescending, ModelScoreTable } from '../components/model-score-table.js';
import { EmptyState, ErrorNotice } from '../components/notice.js';
import { RunPicker } from '../components/run-picker.js';
import { ScoreIntervalChart, type IntervalEntry } from '../components/score-interval-chart.js';
import { modelOfSide } from '../components/pairs.js';
import { noVerdictText } from '../../../core/common/pair-verdict.js';
import { formatDiff, formatInterval, formatPValue, formatScore } from '../../../core/common/score-format.js';
import { useFetch } from '../components/use-fetch.js';
import { useRuns } from '../components/use-runs.js';
import { navigate } from '../state/hash-routes.js';
import { ScrollRegion } from '../components/scroll-region.js';
import { ScorerAndReducerFields } from '../components/score-view-fields.js';
import { VariantsNote } from '../components/variants-note.js';
import { FlippedVignettes } from '../components/flipped-vignettes.js';

function chartEntries(comparison: RunComparison): IntervalEntry[] {
  const order = byMeanDescending(comparison.models_a).map((m) => m.model);
  for (const m of comparison.models_b) if (!order.includes(m.model)) order.push(m.model);
  const entries: IntervalEntry[] = [];
  const side = (label: string, m: ModelScore | undefined, colorIndex: number) => {
    if (m) entries.push({ label: `${label} · ${m.model}`, mean: m.mean, ci95: m.ci95, colorIndex });
  };
  order.forEach((model, i) => {
    side('A', comparison.models_a.find((m) => m.model === model), i);
    side('B', comparison.models_b.find((m) => m.model === model), i);
  });
  return entries;
}

function DifferenceTable({ pairs }: { pairs: readonly PairComparison[] }) {
  return (
    <ScrollRegion label="B − A per model">
      <table className="table compact" data-testid="compare-pairs">
        <caption className="visually-hidden">Paired difference of run B minus run A per model</caption>
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col" className="num" title="Vignettes both runs scored for this model">n</th>
            <th scope="col" className="num">B − A</th>
            <th scope="col" className="num">95% CI</th>
            <th scope="col" className="num">p</th>
            <th scope="col" className="num">p (Holm)</th>
            <th scope="col" className="num" title="The smallest difference this many vignettes would likely detect">Detectable</th>
            <th scope="col">Verdict</th>
          </tr>
        </thead>
        <tbody>
          {pairs.map((p) => (
            <tr key={`${p.a}|${p.b}`} data-model={modelOfSide(p.b)}>
              <th scope="row" className="nowrap">{modelOfSide(p.b)}</th>
              <td className="num">{p.n}</td>
              <td className="num" data-col="diff">{formatDiff(p.diff)}</td>
              <td className="num nowrap" data-col="ci95">{formatInterval(p.ci95, true)}</td>
              <td className="num">{formatPValue(p.p_value)}</td>
              <td className="num">{formatPValue(p.p_holm)}</td>
              <td className="num">{formatScore(p.min_detectable_diff)}</td>
              <td data-col="verdict">
                {p.distinguishable ? (
                  <span className={`badge ${p.diff > 0 ? 'badge-ok' : 'badge-err'}`}>{p.diff > 0 ? 'B scores higher' : 'B scores lower'}</span>
                ) : (
                  <span className="badge badge-muted">{noVerdictText(p.verdict) ?? 'not distinguishable'}</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

function Comparison({ runA, runB }: { runA: string; runB: string }) {
  const client = useClient();
  const [scorerChoice, setScorer] = useState<string | null>(null);
  const [reducer, setReducer] = useState<EpochReducer>('mean');
  const statuses = useFetch(
    () => Promise.all([client.call('scoringStatus', { runId: runA }), client.call('scoringStatus', { runId: runB })]),
    [client, runA, runB],
  );
  const namesB = new Set(statuses.data?.[1].scorers.map((s) => s.name) ?? []);
  const names = [...new Set(statuses.data?.[0].scorers.map((s) => s.name) ?? [])].filter((n) => namesB.has(n));
  const scorer = scorerChoice !== null && names.includes(scorerChoice) ? scorerChoice : (names[0] ?? null);
  const comparison = useFetch(
    scorer === null ? null : () => client.call('compareRuns', { runA, runB, scorer, reducer }),
    [client, runA, runB, scorer, reducer],
  );

  if (statuses.error) return <ErrorNotice error={statuses.error} title="Could not load the runs' scorers" />;
  if (!statuses.data) return <p className="muted">Loading…</p>;
  if (scorer === null) {
    return (
      <EmptyState title="No scorer in common">
        <p>Both runs need a scorer of the same name. Score them from their Results view with the same scoring file.</p>
      </EmptyState>
    );
  }
  const data = comparison.data;
  return (
    <>
      <div className="filters card" role="group" aria-label="What the comparison shows">
        <ScorerAndReducerFields
          testIdPrefix="compare"
          names={names}
          scorer={scorer}
          onScorer={setScorer}
          reducer={reducer}
          onReducer={setReducer}
        />
      </div>
      <ErrorNotice error={comparison.error} title="Could not compare the runs" />
      {data ? (
        <>
          {data.scorer_version_a !== data.scorer_version_b ? (
            <div className="notice notice-warn" role="note" data-testid="version-differs">
              The two runs were scored with different versions of {data.scorer} ({data.scorer_version_a.slice(0, 10)} and{' '}
              {data.scorer_version_b.slice(0, 10)}): a difference may come from the scorer, not the models.
            </div>
          ) : null}
          <div className="card" data-testid="compare-difference">
            <header className="card-header">
              <h2>B − A, paired by vignette</h2>
              <span className="muted small">each model's scores in run B against run A on the vignettes both scored</span>
            </header>
            <VariantsNote variants={data.variants} />
            {data.pairs.length === 0 ? <p className="muted">No model has scores in both runs.</p> : <DifferenceTable pairs={data.pairs} />}
          </div>
          {statuses.data[0].scorers.find((s) => s.name === scorer)?.kind === 'pass_fail' ? <FlippedVignettes runA={runA} runB={runB} scorer={scorer} /> : null}
          <div className="card">
            <header className="card-header">
              <h2>Each run's scores</h2>
              <span className="muted small">
                A = <span className="mono">{runA}</span>, B = <span className="mono">{runB}</span>
              </span>
            </header>
            <div className="results-pair">
              <ScoreIntervalChart testId="compare-chart" title={`Mean ${data.scorer} score per model, run A and run B`} entries={chartEntries(data)} />
              <ModelScoreTable
                models={[...data.models_a.map((m) => ({ ...m, model: `A · ${m.model}` })), ...data.models_b.map((m) => ({ ...m, model: `B · ${m.model}` }))]}
                testId="compare-models"
                caption="Each run's mean score per model with its 95 % confidence interval"
              />
            </div>
          </div>
        </>
      ) : comparison.loading ? (
        <p className="muted">Comparing…</p>
      ) : null}
    </>
  );
}

export function CompareView({ runA, runB }: { runA: string | null; runB: string | null }) {
  const { runs } = useRuns();
  return (
    <section className="view">
      <header className="view-header">
        <div className="view-title">
          <h1>Compare runs</h1>
          <div className="sub">Two runs over the same manifest, paired by vignette id.</div>
        </div>
        <div className="actions">
          <RunPicker runs={runs} value={runA} label="Run A" testId="compare-run-a" onChange={(id) => navigate({ view: 'compare', runA: id, runB })} />
          <RunPicker runs={runs} value={runB} label="Run B" testId="compare-run-b" onChange={(id) => navigate({ view: 'compare', runA, runB: id })} />
        </div>
      </header>
      {runA === null || runB === null ? (
        <EmptyState title="Choose two runs">
          <p>Pick run A and run B above: both over the same manifest, scored with a scorer of the same name.</p>
        </EmptyState>
      ) : runA === runB ? (
        <EmptyState title="Choose two different runs">
          <p>A run compared with itself differs by nothing.</p>
        </EmptyState>
      ) : (
        <Comparison key={`${runA}|${runB}`} runA={runA} runB={runB} />
      )}
    </section>
  );
}
