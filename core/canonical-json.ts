/**
 * Canonical JSON: object keys sorted at every depth and undefined fields left out, so two values
 * that mean the same thing hash the same whatever order their keys were written in. Scorer versions
 * and the prompt cache's host definitions are hashes over it.
 * Runs on: Node (core).
 */

/** JSON with object keys sorted at every depth. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
