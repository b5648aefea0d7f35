/**
 * Run (live): status, overall progress, throughput, ETA, tokens and cost so far; "waiting for host"
 * while calls wait for a host that is down; the model x epoch job grid with each job's progress,
 * attempt, worker and error; the vignettes given up on with their last errors; usage per model; cancel, and once
 * it has ended, retry (its failed and cancelled jobs, or the whole run as a new one). It
 * fetches the run once when it opens; everything after arrives as events.
 * Runs on: renderer.
 */
import { useEffect, useMemo, useState } from 'react';
import { useClient } from '../api/client-context.js';
import type { Job, ModelCost, RunSummary } from '../api/types.js';
import { JobGrid } from '../components/job-grid.js';
import { ModelCostTable } from '../components/model-cost-table.js';
import { EmptyState, ErrorNotice } from '../components/notice.js';
import { ProgressBar } from '../components/progress-bar.js';
import { ScrollRegion } from '../components/scroll-region.js';
import { StatusBadge } from '../components/status-badge.js';
import { useFetch } from '../components/use-fetch.js';
import { RunScoringCosts } from '../components/scoring-costs.js';
import { useNow } from '../components/use-now.js';
import { formatDateTime, formatDuration, formatInt, formatRate, formatTime, formatUsd } from '../format.js';
import { RunManagePanel } from '../components/run-manage-panel.js';
import { RunDecisionPanel } from '../components/run-decision-panel.js';
import { closeRun, loadedRun, openRun, upsertRun, useAppStore } from '../state/app-store.js';
import { isTerminal } from '../state/freshness.js';
import type { JobTable } from '../state/job-table.js';
import { elapsedMs, plannedCalls, progressFraction } from '../state/run-metrics.js';
import { navigate, routeHref } from '../state/hash-routes.js';

const ERROR_LIST_MAX = 50;

function Metric({ label, value, sub, testId }: { label: string; value: string; sub?: string; testId?: string }) {
  return (
    <div className="metric" data-testid={testId}>
      <div className="metric-label">{label}</div>
      <div className="metric-value">{value}</div>
      {sub ? <div className="metric-sub">{sub}</div> : null}
    </div>
  );
}

function JobDetails({ job, onClose }: { job: Job; onClose: () => void }) {
  const duration = job.startedAt === null ? null : (job.finishedAt ?? Date.now()) - job.startedAt;
  return (
    <div className="card job-details" data-testid="job-details" role="region" aria-label="Job details" aria-live="polite">
      <header className="card-header">
        <h2 className="h3">
          {job.model} · epoch {job.epoch}
        </h2>
        <button type="button" className="button small" onClick={onClose}>
          Close
        </button>
      </header>
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={job.status} />
        </dd>
        <dt>Progress</dt>
        <dd>
          {formatInt(job.vignettesDone)} / {formatInt(job.vignetteCount)} vignettes
        </dd>
        <dt>Attempt</dt>
        <dd>{job.attempt}</dd>
        <dt>Worker</dt>
        <dd className="mono">{job.workerId ?? '—'}</dd>
        <dt>Tokens</dt>
        <dd>
          {formatInt(job.usage.inputTokens)} in / {formatInt(job.usage.outputTokens)} out
        </dd>
        <dt>Started</dt>
        <dd>{formatTime(job.startedAt)}</dd>
        <dt>Duration</dt>
        <dd>{formatDuration(duration)}</dd>
        {job.error ? (
          <>
            <dt>Error</dt>
            <dd className="text-error">{job.error}</dd>
          </>
        ) : null}
      </dl>
    </div>
  );
}

/** The vignettes the run gave up on, fetched again whenever their count moves (given-ups are rare). */
function GivenUp({ run }: { run: RunSummary }) {
  const client = useClient();
  const fetched = useFetch(
    run.failedVignettes > 0 ? () => client.call('getRun', { runId: run.id }) : null,
    [client, run.id, run.failedVignettes],
  );
  const failures = run.failedVignettes > 0 ? (fetched.data?.failures ?? []) : [];
  if (failures.length === 0) return null;
  return (
    <div className="card">
      <header className="card-header">
        <h2 className="h3">Vignettes given up on</h2>
        <span className="muted">
          {formatInt(run.failedVignettes)} after their attempts
          {run.failedVignettes > failures.length ? `, the first ${failures.length} shown` : ''}
        </span>
      </header>
      <table className="table compact" data-testid="given-up">
        <thead>
          <tr>
            <th>Vignette</th>
            <th>Job</th>
            <th className="num">Attempts</th>
            <th>Last error</th>
          </tr>
        </thead>
        <tbody>
          {failures.map((f) => (
            <tr key={`${f.jobId}/${f.vignetteIndex}`}>
              <td className="mono" dir="auto">
                {f.vignetteId}
              </td>
              <td className="nowrap">
                {f.model} · epoch {f.epoch}
              </td>
              <td className="num">{f.attempts}</td>
              <td className="text-error">{f.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function JobErrors({ table, version }: { table: JobTable; version: number }) {
  const rows = useMemo(() => {
    const list: Job[] = [];
    for (const index of table.withError) {
      const job = table.cells[index];
      if (job) list.push(job);
      if (list.length >= ERROR_LIST_MAX) break;
    }
    return list;
    // The table is mutated in place: `version` is what says it changed.
  }, [table, version]);
  if (rows.length === 0) return null;
  return (
    <div className="card">
      <header className="card-header">
        <h2 className="h3">Jobs with errors</h2>
        <span className="muted">
          {formatInt(table.withError.size)} job{table.withError.size === 1 ? '' : 's'}
          {table.withError.size > rows.length ? `, the first ${rows.length} shown` : ''}
        </span>
      </header>
      <table className="table compact" data-testid="job-errors">
        <thead>
          <tr>
            <th>Job</th>
            <th>Status</th>
            <th className="num">Attempt</th>
            <th>Worker</th>
            <th>Error</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((job) => (
            <tr key={job.id}>
              <td className="nowrap">
                {job.model} · epoch {job.epoch}
              </td>
              <td>
                <StatusBadge status={job.status} />
              </td>
              <td className="num">{job.attempt}</td>
              <td className="mono">{job.workerId ?? '—'}</td>
              <td className="text-error">{job.error}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function UsageTable({ usage }: { usage: readonly ModelCost[] }) {
  if (usage.length === 0) return null;
  return (
    <div className="card">
      <header className="card-header">
        <h2 className="h3">Usage by model</h2>
      </header>
      <ScrollRegion label="Usage by model">
        <ModelCostTable models={usage} testId="run-usage" />
      </ScrollRegion>
    </div>
  );
}

/** A finished run's retry: its failed and cancelled jobs in place, or the whole run again as a new run (through New run). */
function RetryButtons({ run }: { run: RunSummary }) {
  const client = useClient();
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  if (!isTerminal(run.status)) return null;
  const retry = () => {
    setBusy(true);
    setError(null);
    client.call('retryRun', { runId: run.id, scope: 'failed' }).then(
      () => setBusy(false),
      (err: unknown) => {
        setBusy(false);
        setError(err as Error);
      },
    );
  };
  const unfinished = run.jobCount - run.doneCount;
  return (
    <>
      {unfinished > 0 ? (
        <button type="button" className="button" disabled={busy} onClick={retry} data-testid="retry-failed">
          Retry {unfinished} failed or cancelled job{unfinished === 1 ? '' : 's'}
        </button>
      ) : null}
      {/* The whole run again opens New run filled from this one, to change before Create. */}
      <a className="button" href={routeHref({ view: 'new', example: false, again: run.id })} data-testid="retry-all">
        Run again
      </a>
      {error ? (
        <span className="text-error" role="alert">
          {error.message}
        </span>
      ) : null}
    </>
  );
}

function CancelButton({ run }: { run: RunSummary }) {
  const client = useClient();
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  if (isTerminal(run.status)) return null;
  if (!confirming) {
    return (
      <button type="button" className="button danger" onClick={() => setConfirming(true)} data-testid="cancel-run">
        Cancel run
      </button>
    );
  }
  return (
    <span className="confirm">
      {error ? <span className="text-error">{error.message}</span> : <span>Stop this run? Landed responses are kept.</span>}
      <button
        type="button"
        className="button danger"
        data-testid="confirm-cancel"
        onClick={() => {
          client.call('cancelRun', { runId: run.id }).then(
            () => setConfirming(false),
            (err: unknown) => setError(err as Error),
          );
        }}
      >
        Yes, cancel
      </button>
      <button type="button" className="button" onClick={() => setConfirming(false)}>
        Keep running
      </button>
    </span>
  );
}

export function RunView({ runId }: { runId: string }) {
  const client = useClient();
  const run = useAppStore((s) => s.runs[runId]);
  const usage = useAppStore((s) => s.usage[runId]);
  const open = useAppStore((s) => (s.openRun?.runId === runId ? s.openRun : null));
  const resync = useAppStore((s) => s.resync);
  const [error, setError] = useState<Error | null>(null);
  const [selected, setSelected] = useState<number | null>(null);
  const now = useNow(run?.status === 'running');
  // A retry, resume or takeover sends the run's jobs back to pending: fetched again, since a job's
  // own snapshots would seem older than the ended ones the table holds.
  const restarts = run?.restarts ?? 0;

  useEffect(() => {
    openRun(runId);
    setError(null);
    client.call('getRun', { runId }).then(
      (detail) => {
        upsertRun(detail.run);
        loadedRun(detail);
      },
      (err: unknown) => setError(err as Error),
    );
  }, [client, runId, resync, restarts]);
  useEffect(() => () => closeRun(runId), [runId]);

  if (error && !run) {
    return (
      <section className="view">
        <ErrorNotice error={error} title={`Could not open run ${runId}`} />
      </section>
    );
  }
  if (!run) return <EmptyState title="Loading the run…" />;

  const planned = plannedCalls(run);
  const elapsed = elapsedMs(run, now);
  const rate = open?.meter.rate() ?? null;
  const running = run.status === 'running';
  const shownRate = running ? rate : elapsed && elapsed > 0 ? (run.calls * 1000) / elapsed : null;
  const eta = running ? (open?.meter.etaMs(planned - run.calls) ?? null) : null;
  const selectedJob = open?.table && selected !== null ? open.table.cells[selected] : undefined;

  return (
    <section className="view">
      <header className="view-header">
        <div className="view-title">
          <h1 className="title-with-badge">
            {run.name ? (
              <span dir="auto" data-testid="run-title">
                {run.name}
              </span>
            ) : (
              <span className="mono" data-testid="run-title">
                {run.id}
              </span>
            )}{' '}
            <StatusBadge status={run.status} />
          </h1>
          <div className="sub">
            {run.name ? <span className="mono">{run.id} · </span> : null}
            {run.manifestPath} · {formatInt(run.vignetteCount)} vignettes × {run.models.length} model
            {run.models.length === 1 ? '' : 's'} × {formatInt(run.epochs)} epoch{run.epochs === 1 ? '' : 's'} · concurrency{' '}
            {run.options.concurrency} · privacy {run.options.privacy} · created {formatDateTime(run.createdAt)}
          </div>
        </div>
        <div className="actions">
          <a className="button" href={routeHref({ view: 'results', runId })} data-testid="open-results">
            Results
          </a>
          <a className="button" href={routeHref({ view: 'responses', runId })}>
            Responses
          </a>
          <a className="button" href={routeHref({ view: 'stats', runId })}>
            Stats
          </a>
          <a className="button" href={routeHref({ view: 'export', runId })}>
            Export
          </a>
          <CancelButton run={run} />
          <RetryButtons run={run} />
        </div>
      </header>
      {run.error ? (
        <div className="notice notice-error" role="alert" data-testid="run-error">
          {run.error}
        </div>
      ) : null}
      {run.waitingForHost ? (
        <div className="notice notice-warn" role="status" data-testid="run-waiting">
          Waiting for host <span className="mono">{run.waitingForHost.host}</span>, down since {formatTime(run.waitingForHost.since)}: calls go on
          when it is back.
        </div>
      ) : null}
      <ErrorNotice error={error} />

      <div className="card">
        <div className="metrics">
          <Metric
            label="Progress"
            testId="metric-progress"
            value={`${formatInt(run.calls)} / ${formatInt(planned)}`}
            sub="calls made / planned"
          />
          <Metric
            label="Jobs"
            testId="metric-jobs"
            value={`${formatInt(run.doneCount)} / ${formatInt(run.jobCount)}`}
            sub={run.failedCount > 0 ? `${formatInt(run.failedCount)} failed` : 'done / total'}
          />
          <Metric label="Throughput" value={formatRate(shownRate)} sub={running ? 'calls, last 10 s' : 'calls, average'} />
          <Metric label="ETA" value={running ? formatDuration(eta) : '—'} sub={`elapsed ${formatDuration(elapsed)}`} />
          <Metric
            label="Tokens"
            testId="metric-tokens"
            value={`${formatInt(run.inputTokens)} / ${formatInt(run.outputTokens)}`}
            sub="input / output"
          />
          <Metric label="Est. cost" testId="metric-cost" value={formatUsd(run.estCostUsd)} sub="at the run's prices" />
          <Metric
            label="From cache"
            testId="metric-cached"
            value={`${formatInt(run.cachedCalls)} calls`}
            sub={
              run.cachedCalls > 0
                ? `${formatInt(run.cachedInputTokens)} / ${formatInt(run.cachedOutputTokens)} tokens · saved ${formatUsd(run.savedCostUsd)}`
                : 'answered by the prompt cache'
            }
          />
        </div>
        <ProgressBar fraction={progressFraction(run)} status={run.status} label="run progress" />
      </div>
      <RunDecisionPanel run={run} />

      <div className="card">
        <header className="card-header">
          <h2 className="h3">Jobs</h2>
          <span className="muted">one cell per model × epoch; hover for details, click to pin, or use the arrow keys</span>
        </header>
        {open?.table ? (
          <JobGrid table={open.table} version={open.version} selected={selected} onSelect={setSelected} />
        ) : (
          <p className="muted">Loading jobs…</p>
        )}
      </div>
      {selectedJob ? <JobDetails job={selectedJob} onClose={() => setSelected(null)} /> : null}
      {open?.table ? <JobErrors table={open.table} version={open.version} /> : null}
      <GivenUp run={run} />
      <UsageTable usage={usage ?? []} />
      <RunScoringCosts runId={runId} refresh={`${run.status}|${run.doneCount}`} />
      <RunManagePanel run={run} />
    </section>
  );
}
