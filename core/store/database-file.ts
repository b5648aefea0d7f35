/**
 * Opening a database file safely: a missing file is created (read-write) or reported (read-only);
 * an empty file, one that is not SQLite, or another program's SQLite database is refused with its
 * path, never taken for a new database and written over. Errors name the file or its folder (or,
 * on a full disk, the disk holding it).
 * Runs on: Node (core).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { PanoptesError } from '../domain.js';
import { diskFullError, isDiskFull } from './disk-full.js';

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * A database file is opened only when it is one: a missing file is created (read-write) or
 * reported (read-only); an empty file or one that is not SQLite is refused with its path, never
 * taken for a new database and written over.
 */
export function checkDatabaseFile(path: string, readonly: boolean): void {
  let size: number;
  try {
    size = statSync(path).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw openError(err, path);
    if (readonly) throw new PanoptesError('not_found', `no database at ${path}: nothing has been run with this data folder yet`, { where: path });
    return;
  }
  const refuse = (what: string) =>
    new PanoptesError('invalid_input', `${path} ${what}, not a Panoptes database: move it away (a missing database is created afresh) or choose another --data-dir`, { where: path });
  if (size === 0) throw refuse('is an empty file (0 bytes)');
  const head = Buffer.alloc(SQLITE_HEADER.length);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  if (!head.equals(SQLITE_HEADER)) throw refuse('is not a SQLite file');
}

/** Another program's SQLite database: tables, but none of the schema's versions. */
export function refuseForeignSchema(db: Database.Database, path: string): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  const tables = (db.prepare(`SELECT COUNT(*) AS n FROM sqlite_master`).get() as { n: number }).n;
  if (version === 0 && tables > 0) {
    throw new PanoptesError('invalid_input', `${path} is another program's SQLite database, not a Panoptes database: choose another --data-dir`, { where: path });
  }
}

/** What went wrong opening the database, in one line naming the file or its folder. */
export function openError(err: unknown, path: string): unknown {
  if (err instanceof PanoptesError) return err;
  if (isDiskFull(err)) return diskFullError(path, 'the database could not be opened', err);
  const code = (err as { code?: string }).code ?? '';
  const message = err instanceof Error ? err.message : String(err);
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') {
    return new PanoptesError('invalid_input', `${path} is corrupt (${message}): restore it from a backup or move it away`, { where: path, cause: err });
  }
  if (code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN' || code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new PanoptesError('invalid_input', `cannot open ${path} for writing: the data folder ${dirname(path)} is read-only (${message})`, { where: dirname(path), cause: err });
  }
  return err;
}
