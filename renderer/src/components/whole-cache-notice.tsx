/**
 * New run's warning before Create: every answer of this run would come from the prompt cache (an
 * earlier run asked exactly these questions), so it would repeat that run's answers and cost
 * nothing, and a Compare of the two would show no difference. One click turns the cache off.
 * Runs on: renderer.
 */
import type { RunSummary } from '../api/types.js';
import { routeHref } from '../state/hash-routes.js';
import { wholeCacheSource, type PlannedRun } from '../state/whole-cache.js';

export function WholeCacheNotice({ planned, runs, turnCacheOff }: { planned: PlannedRun | null; runs: readonly RunSummary[]; turnCacheOff: () => void }) {
  const source = planned === null ? null : wholeCacheSource(planned, runs);
  if (source === null) return null;
  return (
    <div className="notice notice-warn" role="status" data-testid="whole-cache">
      Every answer of this run would come from the prompt cache: run{' '}
      <a href={routeHref({ view: 'run', runId: source.id })} className="mono" dir="auto">
        {source.name ?? source.id}
      </a>{' '}
      asked the same questions of these models with the same sampling. It would repeat that run&apos;s answers at no cost, and
      comparing the two would show no difference.{' '}
      <button type="button" className="button small" onClick={turnCacheOff} data-testid="whole-cache-off">
        Turn the cache off for this run
      </button>
    </div>
  );
}
