/**
 * Manifests sent as text (a browser's upload) are kept in the data folder's `manifests/`, in a
 * folder named by a digest of their content, under the file's own name (so a run's manifest reads
 * as the file the user chose), and a run reads them like any other manifest; the same upload twice
 * is one file. An upload no run can use (it has issues) is not kept.
 * Runs on: Node (core).
 */
import { createHash } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export class ManifestUploads {
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'manifests');
  }

  /** Stores an upload; returns the path it is kept at. */
  async keep(content: string, fileName = 'manifest.jsonl'): Promise<string> {
    const digest = createHash('sha256').update(content).digest('hex').slice(0, 16);
    const name = basename(fileName).replace(/[^\w.-]/g, '_');
    const path = join(this.dir, digest, name);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content);
    return path;
  }

  /** Removes an upload that will not be used. */
  async discard(path: string): Promise<void> {
    await rm(dirname(path), { recursive: true, force: true });
  }
}
