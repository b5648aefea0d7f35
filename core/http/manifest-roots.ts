/**
 * Where a remote caller may have manifests read: the data folder's `manifests/` (where uploads are
 * kept), the app's own examples, and the folders the server was started with (`serve
 * --manifest-root DIR`). A client of the HTTP API or the browser bridge names a path on the
 * server's disk; without this, any file the server can read would be read, and the first bytes of
 * each of its lines would come back in the manifest's error. A path is judged by its real path,
 * symlinks resolved, so a link inside a root that points outside is outside. A path outside is
 * refused before a byte of it is read, with the same answer whether or not it exists, naming the
 * allowed roots. (The CLI reads any path its user names: it runs as that user, on their machine.)
 * Runs on: Node (core).
 */
import { realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { PanoptesError } from '../domain.js';
import { examplesDir } from '../paths.js';

export class ManifestRoots {
  readonly roots: readonly string[];

  constructor(roots: readonly string[]) {
    this.roots = roots.map((r) => resolve(r));
  }

  /** The data folder's `manifests/`, the app's examples, then `extra`. */
  static of(dataDir: string, extra: readonly string[] = []): ManifestRoots {
    return new ManifestRoots([join(dataDir, 'manifests'), examplesDir(), ...extra]);
  }

  /**
   * The real path of `path` when it lies under a root; else a refusal naming the roots (`where`
   * names the field, `what` the kind of file: a manifest, or a pairwise judge's baseline file).
   */
  async resolve(path: string, where: string, what = 'manifest'): Promise<string> {
    const asked = resolve(path);
    const real = await realpath(asked).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
      throw this.refusal(asked, where, what);
    });
    const roots = await Promise.all(this.roots.map((r) => realpath(r).catch(() => r)));
    const inside = (p: string) => roots.some((root) => isUnder(root, p));
    if (real === null) {
      // Missing: said so only inside a root, so the answer is no test of which files exist elsewhere.
      if (inside(asked)) throw new PanoptesError(what === 'manifest' ? 'manifest_invalid' : 'invalid_input', `cannot read ${what} ${asked}: no such file`, { where: asked });
      throw this.refusal(asked, where, what);
    }
    if (!inside(real)) throw this.refusal(asked, where, what);
    return real;
  }

  private refusal(path: string, where: string, what: string): PanoptesError {
    return new PanoptesError(
      'invalid_input',
      `${path} is outside the folders ${what === 'manifest' ? 'manifests' : 'data files'} are read from over this server: ${this.roots.join(', ')} (put the ${what} there${what === 'manifest' ? ', upload it,' : ''} or start the server with --manifest-root)`,
      { where },
    );
  }
}

function isUnder(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}
