/**
 * Runs: every run, newest first, with status, name (or id), tags, progress, models, epochs,
 * tokens, cost in all (the sweep's, its judges' and its retries'; the sweep's apart below when scoring cost anything), the date it started and duration; a click opens the run. A search box finds runs by
 * id, name, notes, tags, manifest or model; archived runs are listed only when asked. With no runs yet it offers the example sweep (mock models, no
 * key, no network), so a first run is three clicks away.
 * Runs on: renderer.
 */
import { useState } from 'react';
import type { RunSummary } from '../api/types.js';
import { EmptyState, ErrorNotice } from '../components/notice.js';
import { ProgressBar } from '../components/progress-bar.js';
import { StatusBadge } from '../components/status-badge.js';
import { ScrollRegion } from '../components/scroll-region.js';
import { useNow } from '../components/use-now.js';
import { useRuns } from '../components/use-runs.js';
import { baseName, formatCompact, formatDateTime, formatDuration, formatInt, formatUsd } from '../format.js';
import { matchingRuns } from '../state/run-search.js';
import { elapsedMs, progressFraction } from '../state/run-metrics.js';
import { navigate, routeHref } from '../state/hash-routes.js';

/** The total's parts: the sweep's calls, the judges' and the retries of hard fails. */
function costTitle(run: RunSummary): string {
  return `sweep ${formatUsd(run.estCostUsd)} + judges ${formatUsd(run.judgeCostUsd)} + retries ${formatUsd(run.retryCostUsd)}`;
}

function RunRow({ run, now }: { run: RunSummary; now: number }) {
  return (
    <tr
      className="clickable"
      data-testid="run-row"
      data-run-id={run.id}
      onClick={(e) => {
        // Ctrl/Cmd/Shift+click opens the run in a new tab, as on its link (the new tab finds the token this tab keeps).
        if (e.ctrlKey || e.metaKey || e.shiftKey) window.open(routeHref({ view: 'run', runId: run.id }), '_blank', 'noopener');
        else navigate({ view: 'run', runId: run.id });
      }}
    >
      <td>
        <StatusBadge status={run.status} />
      </td>
      <td>
        <a
          href={routeHref({ view: 'run', runId: run.id })}
          className={run.name ? 'run-name' : 'mono'}
          dir="auto"
          title={run.id}
          onClick={(e) => e.stopPropagation()}
          data-testid="run-link"
        >
          {run.name ?? run.id}
        </a>
        {run.archivedAt !== null ? <span className="chip" data-testid="archived-chip">archived</span> : null}
        <div className="sub">
          {run.name ? <span className="mono">{run.id} · </span> : null}
          {baseName(run.manifestPath)} · {formatInt(run.vignetteCount)} vignettes
        </div>
        {run.tags.length > 0 ? (
          <div className="chips" data-testid="run-tags">
            {run.tags.map((t) => (
              <span key={t} className="chip" dir="auto">
                {t}
              </span>
            ))}
          </div>
        ) : null}
      </td>
      <td className="col-progress">
        <ProgressBar fraction={progressFraction(run)} status={run.status} label={`run ${run.id} progress`} />
      </td>
      <td>
        <div className="chips">
          {run.models.slice(0, 4).map((m) => (
            <span key={m} className="chip">
              {m}
            </span>
          ))}
          {run.models.length > 4 ? <span className="chip">+{run.models.length - 4}</span> : null}
        </div>
      </td>
      <td className="num">{formatInt(run.epochs)}</td>
      <td className="num" title={`${formatInt(run.inputTokens)} in / ${formatInt(run.outputTokens)} out`}>
        {formatCompact(run.inputTokens)} / {formatCompact(run.outputTokens)}
      </td>
      <td className="num" data-testid="run-cost" title={costTitle(run)}>
        {formatUsd(run.totalWithScoringUsd)}
        {run.judgeCostUsd + run.retryCostUsd > 0 ? (
          <div className="sub nowrap" data-testid="run-cost-sweep">
            sweep {formatUsd(run.estCostUsd)}
          </div>
        ) : null}
      </td>
      <td className="nowrap">{formatDateTime(run.startedAt ?? run.createdAt)}</td>
      <td className="num nowrap">{formatDuration(elapsedMs(run, now))}</td>
    </tr>
  );
}

export function RunsView() {
  const { runs, loaded, error } = useRuns();
  const now = useNow(runs.some((r) => r.status === 'running'));
  const [search, setSearch] = useState('');
  const [showArchived, setShowArchived] = useState(false);
  const shown = matchingRuns(runs, search, showArchived);
  const archived = runs.filter((r) => r.archivedAt !== null).length;
  return (
    <section className="view">
      <header className="view-header">
        <h1>Runs</h1>
        <a className="button primary" href={routeHref({ view: 'new', example: false })}>
          New run
        </a>
      </header>
      <ErrorNotice error={error} title="Could not list the runs" />
      {loaded && runs.length === 0 ? (
        <EmptyState title="No runs yet">
          <p>
            A run poses every vignette of a manifest to every model you choose, epoch after epoch. Panoptes ships an
            example manifest and mock models that need no API key and no network: try them first.
          </p>
          <a className="button primary" href={routeHref({ view: 'new', example: true })} data-testid="try-example">
            Try the example run
          </a>
        </EmptyState>
      ) : (
        <div className="card table-card">
          <div className="filters" role="search">
            <input
              type="search"
              className="grow"
              placeholder="Search runs by name, id, notes, tag, manifest or model"
              aria-label="Search runs"
              data-testid="runs-search"
              value={search}
              onChange={(e) => setSearch(e.target.value)}
            />
            <label className="inline-field">
              <input type="checkbox" checked={showArchived} data-testid="show-archived" onChange={(e) => setShowArchived(e.target.checked)} />
              <span>Show archived ({formatInt(archived)})</span>
            </label>
            <span className="muted nowrap" data-testid="runs-count">
              {formatInt(shown.length)} of {formatInt(runs.length)} runs
            </span>
          </div>
          <ScrollRegion label="Runs">
            <table className="table runs-table" data-testid="runs-table">
              <thead>
                <tr>
                  <th scope="col">Status</th>
                  <th scope="col">Run</th>
                  <th scope="col">Progress</th>
                  <th scope="col">Models</th>
                  <th scope="col" className="num">Epochs</th>
                  <th scope="col" className="num">Tokens in / out</th>
                  <th scope="col" className="num" title="The sweep's calls, the judges' and the retries of hard fails">
                    Est. cost
                  </th>
                  <th scope="col">Started</th>
                  <th scope="col" className="num">Duration</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((run) => (
                  <RunRow key={run.id} run={run} now={now} />
                ))}
              </tbody>
            </table>
          </ScrollRegion>
          {!loaded && !error ? <p className="muted pad">Loading…</p> : null}
        </div>
      )}
    </section>
  );
}
