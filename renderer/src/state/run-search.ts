/**
 * Which runs the Runs view lists: archived ones only when asked, and those whose id, name, notes,
 * tags, manifest file or models hold every word of the search (any case).
 * Runs on: renderer.
 */
import type { RunSummary } from '../api/types.js';

export function matchingRuns(runs: readonly RunSummary[], search: string, showArchived: boolean): RunSummary[] {
  const words = search.toLowerCase().split(/\s+/).filter(Boolean);
  return runs.filter((r) => {
    if (!showArchived && r.archivedAt !== null) return false;
    if (words.length === 0) return true;
    const text = [r.id, r.name ?? '', r.notes ?? '', ...r.tags, r.manifestPath, ...r.models, r.status].join('\n').toLowerCase();
    return words.every((w) => text.includes(w));
  });
}
