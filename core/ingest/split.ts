/**
 * How `--split` groups a repository's files into several vignettes when one does not fit: by
 * top-level folder (files at the root form a group of their own), or N files at a time in path order.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../domain.js';

export type SplitRule = { by: 'folder' } | { by: 'files'; count: number };

/** `--split folder` or `--split N`, refused in one line otherwise. */
export function parseSplit(raw: string): SplitRule {
  if (raw === 'folder' || raw === 'folders') return { by: 'folder' };
  const n = Number(raw);
  if (Number.isInteger(n) && n > 0) return { by: 'files', count: n };
  throw new PanoptesError('invalid_input', `--split must be "folder" or a number of files, not "${raw}"`, { where: '--split' });
}

export interface FileGroup<F> {
  /** The top-level folder (`.` for the root's files), or `1`, `2` ... for groups of N files. */
  label: string;
  files: F[];
}

export function groupFiles<F extends { path: string }>(files: readonly F[], rule: SplitRule): FileGroup<F>[] {
  if (rule.by === 'files') {
    const groups: FileGroup<F>[] = [];
    for (let i = 0; i < files.length; i += rule.count) groups.push({ label: String(groups.length + 1), files: files.slice(i, i + rule.count) });
    return groups;
  }
  const byFolder = new Map<string, F[]>();
  for (const f of files) {
    const slash = f.path.indexOf('/');
    const label = slash === -1 ? '.' : f.path.slice(0, slash);
    let group = byFolder.get(label);
    if (!group) byFolder.set(label, (group = []));
    group.push(f);
  }
  return [...byFolder].map(([label, group]) => ({ label, files: group }));
}
