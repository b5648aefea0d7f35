/**
 * Metrics: what the router saw over a window (the last hour, day or week), per profile, per
 * provider and per host — calls, errors by code, p50 / p95 latency, tokens, spend, cache hits —
 * and each daily budget window: its limits against the spend the rolling 24 h hold now. The same
 * report as `panoptes metrics` and `GET /metrics`; a profile can be picked to see its calls alone.
 * Runs on: renderer.
 */
import { useState } from 'react';
import { useClient } from '../api/client-context.js';
import type { MethodResult } from '../api/types.js';
import { ErrorNotice } from '../components/notice.js';
import { ScrollRegion } from '../components/scroll-region.js';
import { useFetch } from '../components/use-fetch.js';
import { formatInt, formatPercent, formatUsd } from '../format.js';

type Report = MethodResult<'metrics'>;
type Totals = Omit<Report['profiles'][number], 'profile'>;
type BudgetWindow = Report['budgets'][number];

const WINDOWS = [
  { label: 'the last hour', ms: 60 * 60_000 },
  { label: 'the last 24 hours', ms: 24 * 60 * 60_000 },
  { label: 'the last 7 days', ms: 7 * 24 * 60 * 60_000 },
] as const;

const errorCount = (t: Totals) => Object.values(t.errors).reduce((n, e) => n + e, 0);

function ErrorsCell({ totals }: { totals: Totals }) {
  const n = errorCount(totals);
  const codes = Object.entries(totals.errors)
    .map(([code, count]) => `${code} ${formatInt(count)}`)
    .join(', ');
  return (
    <td className="num" title={codes || undefined} data-col="errors">
      {formatInt(n)}
      {n > 0 ? <div className="sub">{codes}</div> : null}
    </td>
  );
}

/** Calls, errors, latency, tokens, spend and cache hits: one row of any of the three tables. */
function TotalsCells({ totals }: { totals: Totals }) {
  return (
    <>
      <td className="num" data-col="calls">{formatInt(totals.calls)}</td>
      <ErrorsCell totals={totals} />
      <td className="num">{formatInt(Math.round(totals.p50LatencyMs))} ms</td>
      <td className="num">{formatInt(Math.round(totals.p95LatencyMs))} ms</td>
      <td className="num">{formatInt(totals.inputTokens)}</td>
      <td className="num">{formatInt(totals.outputTokens)}</td>
      <td className="num" data-col="cost">{formatUsd(totals.costUsd)}</td>
      <td className="num">{formatInt(totals.cacheHits)}</td>
    </>
  );
}

function TotalsTable({ title, first, rows, testId }: { title: string; first: string; rows: Array<{ key: string; name: string; totals: Totals }>; testId: string }) {
  return (
    <div className="card">
      <header className="card-header">
        <h2 className="h3">{title}</h2>
      </header>
      {rows.length === 0 ? (
        <p className="muted">No calls in this window.</p>
      ) : (
        <ScrollRegion label={title}>
          <table className="table compact" data-testid={testId}>
            <thead>
              <tr>
                <th scope="col">{first}</th>
                <th scope="col" className="num">Calls</th>
                <th scope="col" className="num">Errors</th>
                <th scope="col" className="num">p50</th>
                <th scope="col" className="num">p95</th>
                <th scope="col" className="num">Input tokens</th>
                <th scope="col" className="num">Output tokens</th>
                <th scope="col" className="num">Spend</th>
                <th scope="col" className="num">Cache hits</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.key} data-row={r.key}>
                  <th scope="row" className="mono" dir="auto">
                    {r.name}
                  </th>
                  <TotalsCells totals={r.totals} />
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
    </div>
  );
}

/** "3 / 10 (30 %)", or the spend alone when that dimension has no limit. */
function usedOf(used: number, limit: number | undefined, format: (n: number) => string): string {
  if (limit === undefined) return `${format(used)} (no limit)`;
  return `${format(used)} / ${format(limit)} (${formatPercent(Math.min(1, used / limit))})`;
}

function BudgetTable({ budgets }: { budgets: readonly BudgetWindow[] }) {
  return (
    <div className="card">
      <header className="card-header">
        <h2 className="h3">Daily budget windows</h2>
        <span className="muted small">rolling 24 hours: settled spend plus calls in flight</span>
      </header>
      {budgets.length === 0 ? (
        <p className="muted" data-testid="no-budgets">
          No provider has a daily budget in the catalog (a provider&apos;s or a profile&apos;s <span className="mono">dailyBudget</span>).
        </p>
      ) : (
        <ScrollRegion label="Daily budget windows">
          <table className="table compact" data-testid="budget-windows">
            <thead>
              <tr>
                <th scope="col">Profile</th>
                <th scope="col">Provider</th>
                <th scope="col" className="num">Calls</th>
                <th scope="col" className="num">Tokens</th>
                <th scope="col" className="num">Spend</th>
              </tr>
            </thead>
            <tbody>
              {budgets.map((b) => (
                <tr key={`${b.profile}/${b.provider}`} data-row={`${b.profile}/${b.provider}`}>
                  <td className="mono">{b.profile}</td>
                  <td className="mono">{b.provider}</td>
                  <td className="num">{usedOf(b.used.calls, b.limit.calls, formatInt)}</td>
                  <td className="num">{usedOf(b.used.tokens, b.limit.tokens, formatInt)}</td>
                  <td className="num">{usedOf(b.used.usd, b.limit.usd, formatUsd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
    </div>
  );
}

export function MetricsView() {
  const client = useClient();
  const [windowMs, setWindowMs] = useState<number>(WINDOWS[1].ms);
  const [profile, setProfile] = useState('');
  const [asked, setAsked] = useState(0);
  const report = useFetch(
    () => client.call('metrics', { since: Date.now() - windowMs, limit: 1, ...(profile === '' ? {} : { profile }) }),
    [client, windowMs, profile, asked],
  );
  // The profiles to choose from: those seen in the window, and the chosen one.
  const everyProfile = useFetch(() => client.call('metrics', { since: Date.now() - WINDOWS[2].ms, limit: 1 }), [client, asked]);
  const profiles = [...new Set([...(everyProfile.data?.profiles.map((p) => p.profile) ?? []), ...(everyProfile.data?.budgets.map((b) => b.profile) ?? [])])];
  const data = report.data;
  return (
    <section className="view">
      <header className="view-header">
        <div className="view-title">
          <h1>Metrics</h1>
          <div className="sub">Every model call the router made (sweeps, judges, retries, probes), and the daily budgets.</div>
        </div>
        <div className="actions">
          <label className="inline-field">
            <span>Calls in</span>
            <select value={windowMs} data-testid="metrics-window" onChange={(e) => setWindowMs(Number(e.target.value))}>
              {WINDOWS.map((w) => (
                <option key={w.ms} value={w.ms}>
                  {w.label}
                </option>
              ))}
            </select>
          </label>
          <label className="inline-field">
            <span>Profile</span>
            <select value={profile} data-testid="metrics-profile" onChange={(e) => setProfile(e.target.value)}>
              <option value="">every profile</option>
              {profiles.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          </label>
          <button type="button" className="button" onClick={() => setAsked((n) => n + 1)} data-testid="metrics-refresh">
            Refresh
          </button>
        </div>
      </header>
      <ErrorNotice error={report.error} title="Could not read the metrics" />
      {data ? (
        <>
          <TotalsTable title="Per profile" first="Profile" testId="metrics-profiles" rows={data.profiles.map((p) => ({ key: p.profile, name: p.profile, totals: p }))} />
          <TotalsTable
            title="Per provider"
            first="Provider"
            testId="metrics-providers"
            rows={data.providers.map((p) => ({ key: p.provider, name: p.provider, totals: p }))}
          />
          <TotalsTable
            title="Per host"
            first="Host"
            testId="metrics-hosts"
            rows={data.hosts.map((h) => ({ key: h.host ?? h.provider, name: h.host ?? h.provider, totals: h }))}
          />
          <BudgetTable budgets={data.budgets} />
        </>
      ) : null}
    </section>
  );
}
