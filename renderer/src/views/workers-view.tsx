/**
 * Workers: the listener for remote workers — turned on here at an address the user picks
 * (127.0.0.1 by default), with the exact `panoptes worker --connect HOST:PORT --token ...` command
 * to copy and where the token is kept — and every worker that can take jobs (the in-process one
 * and remote `panoptes worker` processes) with capacity, jobs in flight, models served and
 * liveness, kept current by events, so a worker that connects appears at once.
 * Runs on: renderer.
 */
import { useEffect, useState, type FormEvent } from 'react';
import { useClient } from '../api/client-context.js';
import type { WorkerListenerStatus } from '../api/types.js';
import { controlProps, Field } from '../components/field.js';
import { ErrorNotice } from '../components/notice.js';
import { ScrollRegion } from '../components/scroll-region.js';
import { formatInt, formatTime } from '../format.js';
import { setWorkers, useAppStore } from '../state/app-store.js';

export function WorkersView() {
  const client = useClient();
  const workers = useAppStore((s) => s.workers);
  const resync = useAppStore((s) => s.resync);
  const [error, setError] = useState<Error | null>(null);

  useEffect(() => {
    client.call('workers').then(setWorkers, (err: unknown) => setError(err as Error));
  }, [client, resync]);

  return (
    <section className="view">
      <header className="view-header">
        <h1>Workers</h1>
      </header>
      <ErrorNotice error={error} title="Could not list the workers" />
      <ListenerCard />
      <div className="card table-card">
        <ScrollRegion label="Workers">
          <table className="table" data-testid="workers-table">
            <thead>
              <tr>
                <th>Worker</th>
                <th>Kind</th>
                <th>Address</th>
                <th className="num">Capacity</th>
                <th className="num">In flight</th>
                <th>Models</th>
                <th>State</th>
                <th>Connected</th>
              </tr>
            </thead>
            <tbody>
              {(workers ?? []).map((w) => (
                <tr key={w.id}>
                  <td className="mono">{w.id}</td>
                  <td>{w.kind}</td>
                  <td className="mono">{w.address ?? '—'}</td>
                  <td className="num">{formatInt(w.capacity)}</td>
                  <td className="num">{formatInt(w.inFlight)}</td>
                  <td>{w.models === 'all' ? <span className="muted">all</span> : w.models.join(', ')}</td>
                  <td>
                    <span className={`badge ${w.alive ? 'badge-ok' : 'badge-err'}`}>{w.alive ? 'alive' : 'lost'}</span>
                  </td>
                  <td>{formatTime(w.connectedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
        {workers?.length === 0 ? (
          <p className="muted pad">No workers. Start one with <span className="mono">panoptes worker</span>.</p>
        ) : null}
      </div>
    </section>
  );
}

/** Turns the worker listener on and off, and shows the command a worker machine runs. */
function ListenerCard() {
  const client = useClient();
  const [status, setStatus] = useState<WorkerListenerStatus | null>(null);
  const [host, setHost] = useState('127.0.0.1');
  const [port, setPort] = useState('7878');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [copied, setCopied] = useState(false);
  const resync = useAppStore((s) => s.resync);

  useEffect(() => {
    client.call('workerListener').then(setStatus, (err: unknown) => setError(err as Error));
  }, [client, resync]);

  const act = async (step: () => Promise<WorkerListenerStatus>) => {
    setBusy(true);
    setError(null);
    setCopied(false);
    try {
      setStatus(await step());
    } catch (err) {
      setError(err as Error);
      client.call('workerListener').then(setStatus, () => undefined);
    } finally {
      setBusy(false);
    }
  };

  const onStart = (e: FormEvent) => {
    e.preventDefault();
    const portNumber = Number(port);
    void act(() => client.call('startWorkerListener', { host: host.trim(), port: Number.isInteger(portNumber) ? portNumber : -1 }));
  };

  const onCopy = async (command: string) => {
    try {
      await navigator.clipboard.writeText(command);
      setCopied(true);
    } catch {
      // Without clipboard access (an insecure origin) the command stays selectable by hand.
      setCopied(false);
    }
  };

  const portError = error?.message.includes('port') ? error.message : null;
  return (
    <div className="card listener-card" data-testid="listener-card">
      <div className="card-header">
        <h2>Remote workers</h2>
        <span className={`badge ${status?.listening ? 'badge-ok' : 'badge-muted'}`} data-testid="listener-state">
          {status?.listening ? `listening on ${status.host}:${status.port}` : 'not listening'}
        </span>
      </div>
      <ErrorNotice error={portError ? null : error} title="The listener did not start" />
      {status?.listening && status.command ? (
        <>
          <p className="listener-note">On each worker machine, run:</p>
          <code className="mono worker-command" data-testid="worker-command">
            {status.command}
          </code>
          <div className="row">
            <button type="button" className="button small" onClick={() => void onCopy(status.command!)} data-testid="copy-command">
              {copied ? 'Copied' : 'Copy command'}
            </button>
            <button type="button" className="button small danger" disabled={busy} onClick={() => void act(() => client.call('stopWorkerListener'))} data-testid="listener-stop">
              Stop listening
            </button>
          </div>
          <p className="muted listener-note" data-testid="token-kept">
            The token is kept in {status.tokenKeptIn}. Anyone with it can take jobs from this Panoptes.
          </p>
        </>
      ) : (
        <form className="form" onSubmit={onStart}>
          <div className="field-row">
            <Field label="Address" name="listener-host" hint="127.0.0.1: this machine only; 0.0.0.0: every network interface.">
              <input {...controlProps('listener-host')} value={host} onChange={(e) => setHost(e.target.value)} data-testid="listener-host" />
            </Field>
            <Field label="Port" name="listener-port" hint="0 picks any free port." error={portError}>
              <input {...controlProps('listener-port', portError)} inputMode="numeric" value={port} onChange={(e) => setPort(e.target.value)} data-testid="listener-port" />
            </Field>
          </div>
          <div className="form-actions">
            <button type="submit" className="button primary" disabled={busy} data-testid="listener-start">
              Accept remote workers
            </button>
            {status ? <span className="muted">The token will be kept in {status.tokenKeptIn}.</span> : null}
          </div>
        </form>
      )}
    </div>
  );
}
