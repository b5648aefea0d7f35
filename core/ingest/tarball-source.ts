/**
 * Reads a `.tar.gz` for a pack, streaming it through node-tar's parser (which gunzips): only
 * regular files are read, links are left out (never followed), paths that climb out of the archive
 * are refused, and reading stops as soon as the packable bytes pass the limit. A common top folder
 * (`repo-1a2b3c/` in a GitHub tarball) is taken off the paths. The file is opened without blocking
 * and read only if it is a regular file: a FIFO named as the source is refused at once.
 * Runs on: Node (core).
 */
import type { FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Parser, type ReadEntry } from 'tar';
import { PanoptesError } from '../domain.js';
import { NotRegularFile, openRegularFile } from '../regular-file.js';
import { abortReason, throwIfStopped } from './pack-abort.js';
import { RepoCollector, type RepoFiles } from './repo-files.js';

const GZIP_MAGIC = [0x1f, 0x8b];

function notATarball(file: string, why: string): PanoptesError {
  return new PanoptesError('invalid_input', `${file} is not a .tar.gz: ${why}`, { where: file });
}

/** The tarball opened, once its first bytes are a gzip header; the caller closes it. */
async function openGzip(file: string): Promise<FileHandle> {
  const handle = await openRegularFile(file).catch((err: unknown) => {
    if (err instanceof NotRegularFile) throw notATarball(file, 'not a regular file');
    throw new PanoptesError('invalid_input', `no such file: ${file}`, { where: file });
  });
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await handle.read(head, 0, 2, 0);
    if (bytesRead < 2 || head[0] !== GZIP_MAGIC[0] || head[1] !== GZIP_MAGIC[1]) throw notATarball(file, 'no gzip header');
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** An entry's path with `./` and backslashes normalised, or undefined when it climbs out of the archive. */
function safePath(raw: string): string | undefined {
  const parts = raw.replace(/\\/g, '/').split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..')) return undefined;
  return parts.join('/');
}

/** The files' paths without their common top folder, when they all share one. */
function stripTopFolder<T extends { path: string }>(items: T[], others: { path: string }[]): string | undefined {
  const all = [...items, ...others];
  const top = all[0]?.path.split('/')[0];
  if (top === undefined || !all.every((f) => f.path.startsWith(`${top}/`))) return undefined;
  for (const f of all) f.path = f.path.slice(top.length + 1);
  return top;
}

export async function readTarball(file: string, maxBytes: number, signal?: AbortSignal): Promise<RepoFiles> {
  throwIfStopped(signal);
  const handle = await openGzip(file);
  const collector = new RepoCollector(file, maxBytes);
  const reads: Promise<void>[] = [];
  let entries = 0;
  let failure: PanoptesError | undefined;
  const stop = (err: unknown) => {
    failure ??= err instanceof PanoptesError ? err : notATarball(file, (err as Error).message);
    parser.abort(failure);
  };
  const parser: Parser = new Parser({
    strict: true,
    onReadEntry: (entry: ReadEntry) => {
      entries++;
      const path = safePath(entry.path);
      if (entry.type === 'Directory') return entry.resume();
      if (path === undefined) {
        entry.resume();
        return stop(notATarball(file, `entry ${JSON.stringify(entry.path)} climbs out of the archive`));
      }
      if (entry.type === 'SymbolicLink' || entry.type === 'Link') {
        collector.leaveOut(path, 'symlink');
        return entry.resume();
      }
      if ((entry.type !== 'File' && entry.type !== 'OldFile' && entry.type !== 'ContiguousFile') || collector.skipsPath(path)) {
        return entry.resume();
      }
      try {
        collector.count(entry.size);
      } catch (err) {
        entry.resume();
        return stop(err);
      }
      const chunks: Buffer[] = [];
      entry.on('data', (c: Buffer) => chunks.push(c));
      reads.push(new Promise<void>((resolve) => entry.on('end', resolve)).then(() => collector.add(path, Buffer.concat(chunks))));
    },
  });
  const onAbort = () => stop(abortReason(signal!));
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await pipeline(handle.createReadStream({ start: 0, autoClose: false }), parser);
  } catch (err) {
    throw failure ?? notATarball(file, (err as Error).message);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await handle.close();
  }
  if (failure) throw failure;
  await Promise.all(reads);
  throwIfStopped(signal);
  if (entries === 0) throw notATarball(file, 'no archive entries');
  const { files, leftOut } = collector.sorted();
  const top = stripTopFolder(files, leftOut);
  return { name: top ?? basename(file).replace(/\.(tar\.gz|tgz)$/i, ''), kind: 'tarball', files, leftOut };
}
