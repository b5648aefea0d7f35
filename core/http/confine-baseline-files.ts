/**
 * A pairwise judge's `baselineFile` over HTTP and the browser bridge is read only from where
 * manifests are (`ManifestRoots`): a remote caller names a path on the server's disk, and without
 * this any file the server can read would be read, and a bad line's error would quote it. A path
 * outside is refused, naming `scorers.N.baselineFile`, before a byte of it is read. (The CLI and
 * the desktop app read any path their user names, as they do manifests.)
 * Runs on: Node (core).
 */
import type { ScoringConfig } from '../service/contract.js';
import type { ManifestRoots } from './manifest-roots.js';

export async function confineBaselineFiles<T extends ScoringConfig | undefined>(scorers: T, roots: ManifestRoots): Promise<T> {
  if (scorers === undefined) return scorers;
  const confined = await Promise.all(
    scorers.scorers.map(async (d, i) =>
      d.type === 'judge' && d.baselineFile !== undefined ? { ...d, baselineFile: await roots.resolve(d.baselineFile, `scorers.${i}.baselineFile`, 'baseline file') } : d,
    ),
  );
  return { ...scorers, scorers: confined };
}
