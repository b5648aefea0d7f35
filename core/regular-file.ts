/**
 * Files a user names (manifests, scoring files, plugin files, baseline files) are opened here:
 * without blocking (O_NONBLOCK, so opening a FIFO returns at once instead of waiting for a writer)
 * and then checked by what was opened (fstat of the descriptor), so only a regular file is ever
 * read: a FIFO, a device, a socket or a directory is refused at once, "not a regular file", and a
 * path swapped between a check and the open cannot slip another kind of file in.
 * Runs on: Node (core).
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** Why a path was refused: it names something other than a regular file. */
export class NotRegularFile extends Error {
  override readonly name = 'NotRegularFile';
  constructor(readonly path: string) {
    super('not a regular file');
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
