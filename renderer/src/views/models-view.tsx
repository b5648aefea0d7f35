/**
 * Models: the roster — every logical model with its frontier judgement, privacy class, context
 * window and price, and each host's live state (ready, cooling until, blacklisted, no key, over
 * budget) with its last probe — and whether two frontier models have a privacy-safe host ready
 * (`frontier_ok`). "Probe hosts" sends one 16-token call to every host and shows what answered.
 * Runs on: renderer.
 */
import { useState } from 'react';
import { useClient } from '../api/client-context.js';
import type { ProbeReport, RosterHost, RosterModel } from '../api/types.js';
import { ErrorNotice } from '../components/notice.js';
import { ScrollRegion } from '../components/scroll-region.js';
import { useFetch } from '../components/use-fetch.js';
import { formatInt, formatPrice, formatTime } from '../format.js';

const STATE_BADGE: Record<RosterHost['state'], string> = {
  ready: 'badge-ok',
  cooling: 'badge-warn',
  over_budget: 'badge-warn',
  blacklisted: 'badge-err',
  no_key: 'badge-muted',
};

function HostLine({ host }: { host: RosterHost }) {
  const probe = host.lastProbe;
  return (
    <li className="host-line" data-host={host.id}>
      <span className="mono">{host.id}</span>{' '}
      <span className={`badge ${STATE_BADGE[host.state]}`} data-testid="host-state" title={host.reason ?? undefined}>
        {host.state.replace('_', ' ')}
        {host.state === 'cooling' || host.state === 'over_budget' ? ` until ${formatTime(host.until)}` : ''}
      </span>{' '}
      <span className={`badge ${host.privacySafe ? 'badge-ok' : 'badge-err'}`}>{host.privacySafe ? 'privacy-safe' : 'may train on prompts'}</span>{' '}
      <span className="muted">
        {formatInt(host.contextWindow)} tokens · {formatPrice(host.inputPerMTok)} / {formatPrice(host.outputPerMTok)}
      </span>
      {probe ? (
        <span className="muted" data-testid="last-probe">
          {' '}
          · probe {formatTime(probe.at)}: {probe.status === 'ok' ? `ok in ${formatInt(probe.latencyMs)} ms` : `${probe.status}${probe.message ? ` (${probe.message})` : ''}`}
        </span>
      ) : null}
    </li>
  );
}

function ModelRow({ model }: { model: RosterModel }) {
  return (
    <tr data-model={model.model}>
      <td className="roster-model">
        <div className="mono" dir="auto">
          {model.model}
        </div>
        {model.label !== model.model ? (
          <div className="muted" dir="auto">
            {model.label}
          </div>
        ) : null}
      </td>
      <td>
        {model.frontier ? (
          <span className="badge badge-ok" data-testid="frontier">
            frontier{model.frontierAsOf ? ` (${model.frontierAsOf})` : ''}
          </span>
        ) : (
          <span className="muted">—</span>
        )}
      </td>
      <td>
        <span className={`badge ${model.privacySafeRoutable ? 'badge-ok' : model.routable ? 'badge-warn' : 'badge-err'}`} data-testid="routable">
          {model.privacySafeRoutable ? 'safe host ready' : model.routable ? 'only unsafe hosts ready' : 'no host ready'}
        </span>
      </td>
      <td className="num">{formatInt(model.contextWindow)}</td>
      <td className="num">
        {formatPrice(model.inputPerMTok)} / {formatPrice(model.outputPerMTok)}
      </td>
      <td>
        <ul className="host-list">
          {model.hosts.map((h) => (
            <HostLine key={h.id} host={h} />
          ))}
        </ul>
      </td>
    </tr>
  );
}

/** Whether a model matches the filter text: its id, label, or a host's id or provider (case-insensitive). */
function matchesModel(model: RosterModel, filter: string): boolean {
  const words = filter.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const text = [model.model, model.label, ...model.hosts.flatMap((h) => [h.id, h.provider])].join(' ').toLowerCase();
  return words.every((w) => text.includes(w));
}

function RosterTable({ models, label, testId }: { models: readonly RosterModel[]; label: string; testId: string }) {
  return (
    <ScrollRegion label={label}>
      <table className="table" data-testid={testId}>
        <thead>
          <tr>
            <th>Model</th>
            <th>Frontier</th>
            <th>Now</th>
            <th className="num">Context</th>
            <th className="num">Price in / out per M</th>
            <th>Hosts</th>
          </tr>
        </thead>
        <tbody>
          {models.map((m) => (
            <ModelRow key={m.model} model={m} />
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

export function ModelsView() {
  const client = useClient();
  const roster = useFetch(() => client.call('roster'), [client]);
  const [probing, setProbing] = useState(false);
  const [probe, setProbe] = useState<ProbeReport | null>(null);
  const [probeError, setProbeError] = useState<Error | null>(null);
  const [filter, setFilter] = useState('');

  const onProbe = async () => {
    setProbing(true);
    setProbeError(null);
    try {
      setProbe(await client.call('probe', {}));
    } catch (err) {
      setProbeError(err as Error);
    } finally {
      setProbing(false);
      roster.reload();
    }
  };

  const data = roster.data;
  const shown = (data?.models ?? []).filter((m) => matchesModel(m, filter));
  // Usable models first; the rest (typically hosted models waiting for a key) folded away below.
  const usable = shown.filter((m) => m.routable);
  const others = shown.filter((m) => !m.routable);
  return (
    <section className="view">
      <header className="view-header">
        <h1>Models</h1>
        <button type="button" className="button primary" onClick={() => void onProbe()} disabled={probing} data-testid="probe-all">
          {probing ? 'Probing…' : 'Probe hosts'}
        </button>
      </header>
      <ErrorNotice error={roster.error} title="Could not read the roster" />
      <ErrorNotice error={probeError} title="The probe failed" />
      {data ? (
        <p className="frontier-status" data-testid="frontier-ok" data-ok={data.frontierOk ? 'true' : 'false'}>
          <span className={`badge ${data.frontierOk ? 'badge-ok' : 'badge-err'}`}>{data.frontierOk ? 'frontier OK' : 'frontier not OK'}</span>{' '}
          {data.frontierReady.length === 0
            ? 'No frontier model has a privacy-safe host that can take a call now.'
            : `Frontier models with a privacy-safe host ready: ${data.frontierReady.join(', ')}.`}{' '}
          {data.frontierOk ? '' : 'At least two are needed.'}
          {data.privacyLock ? <span className="muted"> This instance is locked to {data.privacyLock} privacy.</span> : null}
        </p>
      ) : null}
      {probe ? (
        <p className="muted" data-testid="probe-summary" role="status">
          Probed {formatInt(probe.results.length)} hosts: {formatInt(probe.ok)} answered, {formatInt(probe.failed)} did not.
        </p>
      ) : null}
      {data ? (
        <div className="filters card">
          <input
            type="search"
            className="grow"
            placeholder="Filter models by name, label, host or provider"
            aria-label="Filter models"
            data-testid="models-filter"
            value={filter}
            onChange={(e) => setFilter(e.target.value)}
          />
          <span className="muted nowrap" data-testid="models-count">
            {formatInt(usable.length)} usable now, {formatInt(others.length)} not
          </span>
        </div>
      ) : null}
      <div className="card table-card" data-testid="usable-models">
        <h2 className="h3 pad">Usable now</h2>
        {data && usable.length === 0 ? <p className="muted pad">No model matching the filter has a host that can take a call now.</p> : null}
        {usable.length > 0 ? <RosterTable models={usable} label="Models with a host ready" testId="roster-table" /> : null}
      </div>
      {others.length > 0 ? (
        <details className="card table-card" data-testid="other-models" open={filter.trim() !== '' || undefined}>
          <summary className="pad">
            <h2 className="h3 inline">Not usable now ({formatInt(others.length)})</h2>{' '}
            <span className="muted small">no key, no worker, cooling, blacklisted or over budget</span>
          </summary>
          <RosterTable models={others} label="Models no host can serve now" testId="roster-others" />
        </details>
      ) : null}
    </section>
  );
}
