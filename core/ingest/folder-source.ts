/**
 * Reads a folder for a pack: walks it (never into skipped folders), follows a symbolic link only to a
 * file inside the folder (a link out of it, or to a folder, is left out), and refuses the whole
 * folder once its packable files pass the byte limit, before reading their content. Each file is
 * opened without blocking and read only if what was opened is a regular file, so a FIFO (or a file
 * swapped for one after the walk) is left out at once instead of waiting for a writer for ever.
 * Runs on: Node (core).
 */
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { PanoptesError } from '../domain.js';
import { NotRegularFile, openRegularFile } from '../regular-file.js';
import { skippedFolder } from './file-rules.js';
import { throwIfStopped } from './pack-abort.js';
import { RepoCollector, type RepoFiles } from './repo-files.js';

function inside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel !== '' && !rel.startsWith('..') && !rel.startsWith(sep);
}

/** A file's content, or undefined when what the path names now is not a regular file. */
async function readRegular(path: string): Promise<Buffer | undefined> {
  const handle = await openRegularFile(path).catch((err: unknown) => {
    if (err instanceof NotRegularFile) return undefined;
    throw err;
  });
  if (handle === undefined) return undefined;
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

export async function readFolder(folder: string, maxBytes: number, signal?: AbortSignal): Promise<RepoFiles> {
  const info = await stat(folder).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new PanoptesError('invalid_input', `no such folder: ${folder}`, { where: folder });
  }
  const root = await realpath(folder);
  const collector = new RepoCollector(folder, maxBytes);
  const toRead: { path: string; abs: string }[] = [];
  const pending = [''];
  while (pending.length > 0) {
    throwIfStopped(signal);
    const dir = pending.pop()!;
    for (const entry of await readdir(join(root, dir), { withFileTypes: true })) {
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      const abs = join(root, path);
      if (entry.isDirectory()) {
        const reason = skippedFolder(entry.name);
        if (reason) collector.leaveOut(`${path}/`, reason);
        else pending.push(path);
        continue;
      }
      let target = abs;
      if (entry.isSymbolicLink()) {
        const resolved = await realpath(abs).catch(() => undefined);
        const targetInfo = resolved === undefined ? undefined : await lstat(resolved);
        if (resolved === undefined || !inside(root, resolved) || !targetInfo?.isFile()) {
          collector.leaveOut(path, 'symlink');
          continue;
        }
        target = resolved;
      } else if (!entry.isFile()) {
        // A FIFO, a socket or a device: nothing a reviewer reads, and a FIFO's read would wait.
        collector.leaveOut(path, 'special');
        continue;
      }
      if (collector.skipsPath(path)) continue;
      collector.count((await stat(target)).size);
      toRead.push({ path, abs: target });
    }
  }
  for (const f of toRead) {
    throwIfStopped(signal);
    const content = await readRegular(f.abs);
    if (content === undefined) collector.leaveOut(f.path, 'special');
    else await collector.add(f.path, content);
  }
  return { name: basename(root), kind: 'folder', ...collector.sorted() };
}
