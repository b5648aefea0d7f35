/**
 * The runs, newest first: fetched when a view that lists them opens (and after a reconnect), then
 * kept current by pushed run events.
 * Runs on: renderer.
 */
import { useEffect, useMemo, useState } from 'react';
import { useClient } from '../api/client-context.js';
import type { RunSummary } from '../api/types.js';
import { loadedRuns, sortRuns, useAppStore } from '../state/app-store.js';

export function useRuns(): { runs: RunSummary[]; loaded: boolean; error: Error | null } {
  const client = useClient();
  const runsById = useAppStore((s) => s.runs);
  const loaded = useAppStore((s) => s.runsLoaded);
  const resync = useAppStore((s) => s.resync);
  const [error, setError] = useState<Error | null>(null);

  useEffect(() => {
    let live = true;
    // Archived runs too: the Runs view shows them when asked, and a run's own views always.
    client.call('listRuns', { limit: 1000, archived: 'include' }).then(
      (list) => {
        if (!live) return;
        loadedRuns(list);
        setError(null);
      },
      (err: unknown) => live && setError(err as Error),
    );
    return () => {
      live = false;
    };
  }, [client, resync]);

  const runs = useMemo(() => sortRuns(runsById), [runsById]);
  return { runs, loaded, error };
}
