/**
 * Workers: every worker that can take jobs — the in-process one and remote `panoptes worker`
 * processes — with capacity, jobs in flight, models served and liveness, kept current by events.
 * Runs on: renderer.
 */
import { useEffect, useState } from 'react';
import { useClient } from '../api/client-context.js';
import { ErrorNotice } from '../components/notice.js';
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
      <div className="card table-card">
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
        {workers?.length === 0 ? (
          <p className="muted pad">No workers. Start one with <span className="mono">panoptes worker</span>.</p>
        ) : null}
      </div>
    </section>
  );
}
