/**
 * A full disk, as SQLite reports it (SQLITE_FULL, or the OS's ENOSPC under it): recognised in one
 * place, and turned into one sentence naming the database file whose disk is full, so a command
 * prints one line instead of a stack, and a client gets an error it can act on.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../domain.js';

/** Whether a write failed because the disk holding the database is full. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_FULL' || code === 'ENOSPC';
}

/** The error for a write that found no room: what was being stored, and the file whose disk is full. */
export function diskFullError(dbPath: string, doing: string, cause: unknown): PanoptesError {
  return new PanoptesError('disk_full', `no space left on the disk holding ${dbPath}: ${doing}; free some space and try again`, { cause });
}

/** The disk-full error a write gave after waiting for room: what stops scoring, never a record's failure to score. */
export function isStoppedByDisk(err: unknown): boolean {
  return err instanceof PanoptesError && err.code === 'disk_full';
}
