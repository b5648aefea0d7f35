/**
 * Replacing a file so that a crash or a power cut leaves the old file or the new one, never a torn
 * one: the content goes to a temporary file beside the target, which is fsynced, renamed over the
 * target, and then the folder is fsynced so the rename itself is durable. Every file Panoptes
 * replaces (exports, the listener's token, the app's saved address) goes through here.
 * Runs on: Node (core).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/** A temporary name beside `path`, unique to this call. */
export function temporaryPathFor(path: string): string {
  return `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
}

/** Writes `content` to `path` atomically and durably; `mode` applies to the new file. */
export function writeFileAtomicSync(path: string, content: string | Uint8Array, mode = 0o644): void {
  const tmp = temporaryPathFor(path);
  try {
    const fd = openSync(tmp, 'w', mode);
    try {
      writeSync(fd, typeof content === 'string' ? Buffer.from(content, 'utf8') : content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  syncFolderSync(dirname(path));
}

/**
 * Moves a finished temporary file (one of `temporaryPathFor`'s, written by a stream) over `path`:
 * fsync it, rename it, fsync the folder. On failure the temporary file is removed.
 */
export async function replaceAtomically(tmp: string, path: string): Promise<void> {
  try {
    const handle = await open(tmp, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  const folder = await open(dirname(path), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

function syncFolderSync(folder: string): void {
  const fd = openSync(folder, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
