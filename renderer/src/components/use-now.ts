/**
 * The current time, ticking once a second while `active` (a running run's elapsed time and ETA).
 * It moves a clock on screen; it fetches nothing.
 * Runs on: renderer.
 */
import { useEffect, useState } from 'react';

export function useNow(active: boolean, intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [active, intervalMs]);
  return now;
}
