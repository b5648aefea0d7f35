/**
 * Fetches once when a view opens (and again when its inputs change or the event stream
 * reconnected), keeping only the latest answer when an older request returns late.
 * Runs on: renderer.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { useAppStore } from '../state/app-store.js';

export interface Fetched<T> {
  data: T | undefined;
  error: Error | null;
  loading: boolean;
  reload: () => void;
}

export function useFetch<T>(load: (() => Promise<T>) | null, deps: readonly unknown[]): Fetched<T> {
  const resync = useAppStore((s) => s.resync);
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | null>(null);
  const [loading, setLoading] = useState(load !== null);
  const [reloads, setReloads] = useState(0);
  const latest = useRef(0);

  useEffect(() => {
    if (!load) return;
    const ticket = ++latest.current;
    setLoading(true);
    load().then(
      (value) => {
        if (ticket !== latest.current) return;
        setData(value);
        setError(null);
        setLoading(false);
      },
      (err: unknown) => {
        if (ticket !== latest.current) return;
        setError(err instanceof Error ? err : new Error(String(err)));
        setLoading(false);
      },
    );
    // `load` is rebuilt on every render; `deps` say when it means something new.
  }, [...deps, resync, reloads]);

  const reload = useCallback(() => setReloads((n) => n + 1), []);
  return { data, error, loading, reload };
}
