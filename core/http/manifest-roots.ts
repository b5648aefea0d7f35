/**
 * Where a remote caller may have manifests read: the data folder's `manifests/` (where uploads are
 * kept), the app's own examples, and the folders the server was started with (`serve
 * --manifest-root DIR`). A client of the HTTP API or the browser bridge names a path on the
 * server's disk; without this, any file the server can read would be read, and the first bytes of
 * each of its lines would come back in the manifest's error. A path is judged by its real path,
 * symlinks resolved, so a link inside a root that points outside is outside. A path outside is
 * refused before a byte of it is read, with the same answer whether or not it exists, naming the
 * allowed roots. A pairwise judge's baseline file, and a repository to pack (a folder, a tarball
 * or a git folder), are held to the same roots. (The CLI reads any
 * path its user names: it runs as that user, on their machine.)
 * Runs on: Node (core).
 */
import { realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PanoptesError } from '../domain.js';
import { examplesDir } from '../paths.js';
import { NotRegularFile, isUnder, openRegularFile, openedRealPath } from '../regular-file.js';
import type { CheckManifestInput, ControlMethod, CreateRunInput, PackRepositoryInput, ReportHtmlInput, ScoreRunInput, ScoringConfig } from '../service/contract.js';

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
    // Judged again by the file actually opened (without blocking: a FIFO is refused at once), so a
    // link swapped in after the real path was read cannot move the read outside.
    const handle = await openRegularFile(real).catch((err: unknown) => {
      if (err instanceof NotRegularFile) throw new PanoptesError(what === 'manifest' ? 'manifest_invalid' : 'invalid_input', `cannot read ${what} ${asked}: not a regular file`, { where });
      throw this.refusal(asked, where, what);
    });
    try {
      if (!inside(await openedRealPath(handle, real))) throw this.refusal(asked, where, what);
    } finally {
      await handle.close();
    }
    return real;
  }

  /**
   * The real path of a repository to pack under a root: a folder (whose walk then follows no link
   * out of it), else a regular file, judged as `resolve` judges a manifest (a FIFO refused at once).
   */
  async resolveRepository(path: string, where: string): Promise<string> {
    const asked = resolve(path);
    const real = await realpath(asked).catch(() => null);
    const info = real === null ? undefined : await stat(real).catch(() => undefined);
    if (real === null || !info?.isDirectory()) return this.resolve(asked, where, 'repository');
    const roots = await Promise.all(this.roots.map((r) => realpath(r).catch(() => r)));
    if (!roots.some((root) => isUnder(root, real))) throw this.refusal(asked, where, 'repository');
    return real;
  }

  /**
   * A validated contract input with the files it names on the server's disk (createRun's
   * `manifestPath`, checkManifest's `path`, a pairwise judge's `baselineFile` in createRun's and
   * scoreRun's scorers, packRepository's `source`) replaced by their real paths once a root allows them, and a file the
   * server would write (reportHtml's `outPath`) refused: the `admit` of the remote transports' policies.
   */
  async confine(method: ControlMethod, input: unknown): Promise<unknown> {
    if (method === 'createRun') {
      const i = input as CreateRunInput;
      const scorers = await this.confineBaselineFiles(i.scorers);
      return { ...i, manifestPath: await this.resolve(i.manifestPath, 'manifestPath'), scorers };
    }
    if (method === 'scoreRun') {
      const i = input as ScoreRunInput;
      return { ...i, scorers: await this.confineBaselineFiles(i.scorers) };
    }
    if (method === 'reportHtml' && (input as ReportHtmlInput).outPath !== undefined) {
      // The server's disk is not the client's: the page is sent, and the client saves it.
      throw new PanoptesError('invalid_input', 'reportHtml: outPath writes on the server\'s disk, which this server does not do; leave it out and save the page it answers with', { where: 'outPath' });
    }
    if (method === 'packRepository') {
      const i = input as PackRepositoryInput;
      return { ...i, source: await this.resolveRepository(i.source, 'source') };
    }
    if (method === 'checkManifest') {
      const i = input as CheckManifestInput;
      return i.path === undefined ? i : { ...i, path: await this.resolve(i.path, 'path') };
    }
    return input;
  }

  /**
   * A pairwise judge's `baselineFile` is read only from where manifests are: without this, any file
   * the server can read would be read, and a bad line's error would quote it.
   */
  private async confineBaselineFiles<T extends ScoringConfig | undefined>(scorers: T): Promise<T> {
    if (scorers === undefined) return scorers;
    const confined = await Promise.all(
      scorers.scorers.map(async (d, i) =>
        d.type === 'judge' && d.baselineFile !== undefined ? { ...d, baselineFile: await this.resolve(d.baselineFile, `scorers.${i}.baselineFile`, 'baseline file') } : d,
      ),
    );
    return { ...scorers, scorers: confined };
  }

  private refusal(path: string, where: string, what: string): PanoptesError {
    return new PanoptesError(
      'invalid_input',
      `${path} is outside the folders ${what === 'manifest' ? 'manifests' : 'data files'} are read from over this server: ${this.roots.join(', ')} (put the ${what} there${what === 'manifest' ? ', upload it,' : ''} or start the server with --manifest-root)`,
      { where },
    );
  }
}
