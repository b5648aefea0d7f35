/**
 * Files a user names (manifests, scoring files, plugin files, baseline files) are opened here:
 * without blocking (O_NONBLOCK, so opening a FIFO returns at once instead of waiting for a writer)
 * and then checked by what was opened (fstat of the descriptor), so only a regular file is ever
 * read: a FIFO, a device, a socket or a directory is refused at once, "not a regular file", and a
 * path swapped between a check and the open cannot slip another kind of file in. Given folders
 * (`openRegularFileWithin`), the file opened is also held to them by its own real path.
 * Runs on: Node (core).
 */
import { constants } from 'node:fs';
import { open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';

/** Why a path was refused: it names something other than a regular file. */
export class NotRegularFile extends Error {
  override readonly name = 'NotRegularFile';
  constructor(readonly path: string) {
    super('not a regular file');
  }
}

/** Why a path was refused: the file opened lies outside every folder it may be read from. */
export class OutsideRoots extends Error {
  override readonly name = 'OutsideRoots';
  constructor(
    readonly path: string,
    readonly roots: readonly string[],
  ) {
    super(`outside the folders it may be read from: ${roots.join(', ')}`);
  }
}

/** Opens `path` for reading if, once opened, it is a regular file; the caller closes the handle. */
export async function openRegularFile(path: string): Promise<FileHandle> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!(await handle.stat()).isFile()) throw new NotRegularFile(path);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** The whole of a regular file as UTF-8 text. */
export async function readRegularText(path: string): Promise<string> {
  const handle = await openRegularFile(path);
  try {
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * The real path of the file a handle has open: what was opened, whatever the path named then or
 * names now (a symlink swapped after a check). On Linux read from the descriptor itself; elsewhere
 * the path's real path, read just after the open.
 */
export async function openedRealPath(handle: FileHandle, path: string): Promise<string> {
  if (process.platform === 'linux') return readlink(`/proc/self/fd/${handle.fd}`);
  return realpath(path);
}

/** Whether `path` lies strictly under `root` (both absolute, symlinks already resolved). */
export function isUnder(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/**
 * Opens `path` as openRegularFile does, then, with `roots`, keeps it open only if the real path of
 * the file opened (not of the path: a symlink swapped in since it was named cannot move the read)
 * lies under one of the roots' real paths; else it is closed and refused with OutsideRoots.
 */
export async function openRegularFileWithin(path: string, roots: readonly string[] | undefined): Promise<FileHandle> {
  const handle = await openRegularFile(path);
  if (roots === undefined) return handle;
  try {
    const [opened, ...real] = await Promise.all([openedRealPath(handle, path), ...roots.map((r) => realpath(r).catch(() => r))]);
    if (!real.some((root) => isUnder(root, opened!))) throw new OutsideRoots(path, roots);
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}
