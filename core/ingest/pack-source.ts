/**
 * What `panoptes pack SOURCE` reads: a git folder's diff when a range is given, a `.tar.gz` when
 * SOURCE is a file, else a folder; and the window the pack is fitted to, the smallest context window
 * among the chosen models, so every model sees the same prompt and comparisons stay paired.
 * Runs on: Node (core).
 */
import { stat } from 'node:fs/promises';
import { PanoptesError } from '../domain.js';
import type { Catalog } from '../models/catalog.js';
import { nearestIds } from '../models/nearest-ids.js';
import { readFolder } from './folder-source.js';
import { readGitDiff } from './git-diff-source.js';
import type { RepoFiles } from './repo-files.js';
import { readTarball } from './tarball-source.js';

export async function readSource(source: string, opts: { diff?: string | undefined; maxBytes: number; signal?: AbortSignal | undefined }): Promise<RepoFiles> {
  if (opts.diff !== undefined) return readGitDiff(source, opts.diff, opts.maxBytes, opts.signal);
  const info = await stat(source).catch(() => undefined);
  if (!info) throw new PanoptesError('invalid_input', `no such folder or file: ${source}`, { where: source });
  return info.isDirectory() ? readFolder(source, opts.maxBytes, opts.signal) : readTarball(source, opts.maxBytes, opts.signal);
}

/** The smallest of the models' windows (each model's largest host window), refusing a model the catalog does not have. */
export function smallestWindow(catalog: Catalog, models: readonly string[]): number {
  if (models.length === 0) throw new PanoptesError('invalid_input', '--models names no model', { where: '--models' });
  let window = Infinity;
  for (const model of models) {
    if (!catalog.has(model)) {
      throw new PanoptesError('invalid_input', `unknown model "${model}"; did you mean ${nearestIds(model, catalog.modelIds()).join(', ')}?`, { where: '--models' });
    }
    // A model's window is its largest host's: the router sends a prompt only to hosts whose window holds it.
    window = Math.min(window, Math.max(...catalog.hosts(model).map((h) => h.contextWindow)));
  }
  return window;
}
