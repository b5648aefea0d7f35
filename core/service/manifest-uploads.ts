/**
 * Manifests sent as text (a browser's upload) are kept in the data folder's `manifests/`, in a
 * folder named by a digest of their content, under the file's own name (so a run's manifest reads
 * as the file the user chose), and a run reads them like any other manifest; the same upload twice
 * is one file. An upload no run can use (it has issues) is not kept.
 *
 * Only a regular file is ever written, and only inside `manifests/`: the digest is predictable, so
 * whatever someone left at its place (a FIFO, whose open for writing would wait for a reader for
 * ever; a symlink, which would have the upload written through it to anywhere) is never opened.
 * The text is written to a new file of its own (exclusive create) and renamed over the name, which
 * replaces the entry itself, not what it points to; a digest folder that is not a real directory
 * inside `manifests/` is refused.
 * Runs on: Node (core).
 */
import { createHash, randomBytes } from 'node:crypto';
import { lstat, mkdir, open, realpath, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { PanoptesError } from '../domain.js';

/** Characters hashed or written at once: a manifest of hundreds of megabytes goes a slice at a time, a turn of the event loop between. */
const SLICE_CHARS = 1 << 20;

/** The content's slices in order: each part cut every SLICE_CHARS, never between the two halves of a surrogate pair. */
function* slicesOf(parts: readonly string[]): Generator<string> {
  for (const part of parts) {
    for (let at = 0; at < part.length; ) {
      let end = Math.min(at + SLICE_CHARS, part.length);
      if (end < part.length && /[\uD800-\uDBFF]/.test(part[end - 1]!)) end++;
      yield part.slice(at, end);
      at = end;
    }
  }
}

/** The digest of the parts' concatenation (the same whether it came as one string or as lines). */
async function digestOf(parts: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const slice of slicesOf(parts)) {
    hash.update(slice);
    await turn();
  }
  return hash.digest('hex').slice(0, 16);
}

/** Writes the parts to a new file of its own (exclusive create), a slice at a time. */
async function writeNew(path: string, parts: readonly string[]): Promise<void> {
  const handle = await open(path, 'wx');
  try {
    for (const slice of slicesOf(parts)) await handle.write(slice);
  } finally {
    await handle.close();
  }
}

export class ManifestUploads {
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'manifests');
  }

  /** Stores an upload (its text, or its lines' texts in order); returns the path it is kept at. */
  async keep(content: string | readonly string[], fileName = 'manifest.jsonl'): Promise<string> {
    const parts = typeof content === 'string' ? [content] : content;
    const digest = await digestOf(parts);
    const name = basename(fileName).replace(/[^\w.-]/g, '_');
    const folder = join(this.dir, digest);
    await mkdir(folder, { recursive: true });
    const [root, real, entry] = await Promise.all([realpath(this.dir), realpath(folder), lstat(folder)]);
    if (!entry.isDirectory() || real !== join(root, digest)) {
      throw new PanoptesError('invalid_input', `cannot keep the upload: ${folder} is not a folder of the data folder's manifests/`, { where: 'content' });
    }
    const path = join(folder, name);
    const fresh = join(folder, `.${name}.${randomBytes(6).toString('hex')}.part`);
    await writeNew(fresh, parts);
    try {
      await rename(fresh, path);
    } catch (err) {
      await rm(fresh, { force: true });
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EISDIR' || code === 'ENOTEMPTY' || code === 'EEXIST') throw new PanoptesError('invalid_input', `cannot keep the upload at ${path}: not a regular file`, { where: 'content' });
      throw err;
    }
    return path;
  }

  /** Removes an upload that will not be used. */
  async discard(path: string): Promise<void> {
    await rm(dirname(path), { recursive: true, force: true });
  }
}
