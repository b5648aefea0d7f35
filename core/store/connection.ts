/**
 * The store's one connection and its durability: opening the file (checked, in WAL mode,
 * migrated), commits synchronous by default (synchronous=FULL), so nothing acknowledged is lost on
 * kill -9 or power loss, except the two kinds a sweep makes by the thousand, which commit
 * `withoutSync`: a run's records (synced by the record lander within a second) and the router's
 * metrics and cache entries. In WAL mode such a commit still survives the process being killed; an
 * OS crash or power loss can undo it only until the next synchronous commit or `syncWal()`, each
 * of which syncs every commit before it. What such a loss undoes is redone: a job's progress is
 * counted from the same rows as its records. An fsync costs the whole machine far more than the
 * commit it ends.
 * Runs on: Node (core).
 */
import { closeSync, fdatasyncSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { backoffDelay } from '../concurrency/backoff.js';
import { checkDatabaseFile, openError, refuseForeignSchema } from './database-file.js';
import { MIGRATIONS } from './migrations.js';

export interface ConnectionOptions {
  /** Milliseconds a writer waits for another process's lock before failing. */
  busyTimeoutMs?: number | undefined;
  readonly?: boolean | undefined;
  /** Path of a better-sqlite3 addon built for another ABI (Electron's); default: the Node build in node_modules. */
  nativeBinding?: string | undefined;
}

/**
 * better-sqlite3's addon built for Node, where its install puts it. Given by path, the addon loads
 * at once; left to better-sqlite3, its `bindings` lookup reads a stack trace and probes a dozen
 * folders first: several milliseconds of every `panoptes runs` and `stats`.
 */
function nodeAddonPath(): string {
  const pkg = createRequire(import.meta.url).resolve('better-sqlite3/package.json');
  return join(dirname(pkg), 'build', 'Release', 'better_sqlite3.node');
}

export class Connection {
  /** The better-sqlite3 handle: for the rooms under core/store/ only. */
  readonly db: Database.Database;
  readonly path: string;
  /** The better-sqlite3 addon this connection loaded (another connection to the file loads the same). */
  readonly nativeBinding: string;
  /** The write-ahead log, opened on the first `syncWal`. */
  private walFd: number | undefined;

  constructor(path: string, opts: ConnectionOptions = {}) {
    this.path = path;
    if (path !== ':memory:') checkDatabaseFile(path, opts.readonly ?? false);
    this.nativeBinding = opts.nativeBinding ?? nodeAddonPath();
    this.db = new Database(path, { readonly: opts.readonly ?? false, nativeBinding: this.nativeBinding });
    try {
      this.db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 10_000}`);
      if (path !== ':memory:') refuseForeignSchema(this.db, path);
      if (!opts.readonly) {
        this.enableWal(opts.busyTimeoutMs ?? 10_000);
        this.db.pragma('synchronous = FULL');
        this.db.pragma('foreign_keys = ON');
        this.migrate();
      }
    } catch (err) {
      this.db.close();
      throw openError(err, path);
    }
  }

  /**
   * Turns WAL on. A database the last connection closed is in rollback-journal mode (see `close`);
   * two processes opening it at once both try to switch, and SQLite answers one SQLITE_BUSY at
   * once, without waiting (a reader upgrading while another holds the lock it waits for would
   * deadlock). Its lock is released: try again, within the busy timeout.
   */
  private enableWal(timeoutMs: number): void {
    const deadline = Date.now() + timeoutMs;
    for (let failures = 1; ; failures++) {
      try {
        this.db.pragma('journal_mode = WAL');
        return;
      } catch (err) {
        const wait = backoffDelay({ baseMs: 2, maxMs: 50, jitter: [0.5, 1] }, failures);
        if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() + wait > deadline) throw err;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, wait);
      }
    }
  }

  /** Closes the connection after a failure while the rooms were being set up, naming the file. */
  abandon(err: unknown): unknown {
    this.db.close();
    return openError(err, this.path);
  }

  /**
   * Closes the database. The last connection to close returns it to rollback-journal mode: SQLite
   * cannot open a WAL database read-only where it may not create the `-shm` file, so a data folder
   * made read-only afterwards could not be read at all. The next read-write open turns WAL on again.
   */
  close(): void {
    if (this.walFd !== undefined) closeSync(this.walFd);
    this.walFd = undefined;
    if (!this.db.open) return;
    if (!this.db.readonly && !this.db.memory) {
      try {
        this.db.pragma('busy_timeout = 0');
        this.db.pragma('journal_mode = DELETE');
      } catch {
        // Another connection is open: it stays in WAL mode, and the last one to close switches.
      }
    }
    this.db.close();
  }

  /**
   * Runs `commit` (which makes its own transaction) with synchronous=NORMAL: the commit skips its
   * fsync. For writes that are many and small, made durable in bulk by `syncWal` or by the next
   * synchronous commit (in WAL mode that fsync covers every commit before it).
   */
  withoutSync<T>(commit: () => T): T {
    // Inside a transaction the level cannot change (SQLite refuses): the outer commit's applies.
    if (this.db.inTransaction) return commit();
    // exec, not pragma(): pragma() prepares a statement each time, most of a small commit's cost.
    this.db.exec('PRAGMA synchronous = NORMAL');
    try {
      return commit();
    } finally {
      this.db.exec('PRAGMA synchronous = FULL');
    }
  }

  /** Makes every commit so far durable: one fdatasync of the write-ahead log, what a synchronous commit ends with. */
  syncWal(): void {
    if (this.db.memory || this.db.readonly) return;
    if (this.walFd === undefined) {
      try {
        // Read-write: Windows flushes only handles opened for writing.
        this.walFd = openSync(`${this.path}-wal`, 'r+');
      } catch (err) {
        // No log yet means no commit is waiting in one.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw err;
      }
    }
    fdatasyncSync(this.walFd);
  }

  /** Runs every migration newer than the database, each in its own transaction. */
  private migrate(): void {
    const current = this.db.pragma('user_version', { simple: true }) as number;
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      this.db
        .transaction(() => {
          this.db.exec(m.up);
          this.db.pragma(`user_version = ${m.version}`);
        })
        .immediate();
    }
  }

  schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  /**
   * SQLite's `PRAGMA data_version`: it changes when another connection (another process on this
   * data folder) commits, never for this connection's own commits. Reading it costs microseconds.
   */
  dataVersion(): number {
    return this.db.pragma('data_version', { simple: true }) as number;
  }

  integrityCheck(): string {
    return this.db.pragma('integrity_check', { simple: true }) as string;
  }
}
