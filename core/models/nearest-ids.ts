/**
 * "Did you mean": the catalog ids nearest to a name nobody knows, by edit distance (case ignored),
 * so an unknown model gets one or a few suggestions instead of every id in the catalog.
 * Runs on: Node (core).
 */
import { distance } from 'fastest-levenshtein';

/** The ids closest to `name`: those within a third of its length (at least 2 edits), best first, at most `max`; else the single closest. */
export function nearestIds(name: string, ids: readonly string[], max = 3): string[] {
  const needle = name.toLowerCase();
  const ranked = ids
    .map((id) => ({ id, d: distance(needle, id.toLowerCase()) - (id.toLowerCase().includes(needle) ? 1 : 0) }))
    .sort((a, b) => a.d - b.d || a.id.localeCompare(b.id));
  const near = ranked.filter((r) => r.d <= Math.max(2, Math.floor(name.length / 3))).slice(0, max);
  return (near.length > 0 ? near : ranked.slice(0, 1)).map((r) => r.id);
}
