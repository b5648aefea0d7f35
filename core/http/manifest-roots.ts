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
import type { CheckManifestInput, ControlMethod, CreateRunInput } from '../service/contract.js';

export class ManifestRoots {
  readonly roots: readonly string[];

  constructor(roots: readonly string[]) {
    this.roots = roots.map((r) => resolve(r));
  }

  /** The data folder's `manifests/`, the app's examples, then `extra`. */
  static of(dataDir: string, extra: readonly string[] = []): ManifestRoots {
    return new ManifestRoots([join(dataDir, 'manifests'), examplesDir(), ...extra]);
  }

  /** The real path of `path` when it lies under a root; else a refusal naming the roots (`where` names the field). */
  async resolve(path: string, where: string): Promise<string> {
    const asked = resolve(path);
    const real = await realpath(asked).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
      throw this.refusal(asked, where);
    });
    const roots = await Promise.all(this.roots.map((r) => realpath(r).catch(() => r)));
    const inside = (p: string) => roots.some((root) => isUnder(root, p));
    if (real === null) {
      // Missing: said so only inside a root, so the answer is no test of which files exist elsewhere.
      if (inside(asked)) throw new PanoptesError('manifest_invalid', `cannot read manifest ${asked}: no such file`, { where: asked });
      throw this.refusal(asked, where);
    }
    if (!inside(real)) throw this.refusal(asked, where);
    return real;
  }

  /**
   * A validated contract input with the manifest it names on the server's disk (createRun's
   * `manifestPath`, checkManifest's `path`) replaced by its real path once a root allows it: the
   * `admit` of the remote transports' policies.
   */
  async confine(method: ControlMethod, input: unknown): Promise<unknown> {
    if (method === 'createRun') {
      const i = input as CreateRunInput;
      return { ...i, manifestPath: await this.resolve(i.manifestPath, 'manifestPath') };
    }
    if (method === 'checkManifest') {
      const i = input as CheckManifestInput;
      return i.path === undefined ? i : { ...i, path: await this.resolve(i.path, 'path') };
    }
    return input;
  }

  private refusal(path: string, where: string): PanoptesError {
    return new PanoptesError(
      'invalid_input',
      `${path} is outside the folders manifests are read from over this server: ${this.roots.join(', ')} (put the manifest there, upload it, or start the server with --manifest-root)`,
      { where },
    );
  }
}

function isUnder(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}
