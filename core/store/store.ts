/**
 * The Store: the typed face of the database, one room per concern, and under core/store/ the only
 * code that speaks SQL. SQLite through better-sqlite3 in WAL mode; every write that must be atomic
 * is one IMMEDIATE transaction; every aggregate is SQL.
 *
 * - `runs` (run-lifecycle.ts): staging, queueing, claiming, leasing, fencing and settling runs.
 * - `jobs` (job-lifecycle.ts): jobs, their attempts and the vignettes they gave up on.
 * - `records` (record-writes.ts): landing a job's records, the job ledger's and the lander's way in.
 * - `stages` (stage-progress.ts): a staged vignette's calls stored as they finish, for resuming mid-template.
 * - `removal` (run-removal.ts): deleting a finished run and all it holds; archived runs past a retention.
 * - `queries` (run-queries.ts): the reads of the app, the HTTP API and the engine; the Responses
 *   view's pages are read off the main thread (`readResponses`, response-reader.ts).
 * - `router` (router-store.ts): the model router's cache, metrics and budget windows.
 * - the face itself (connection.ts): durability (`withoutSync`, `syncWal`), schema and closing.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import { Connection, type ConnectionOptions } from './connection.js';
import { JobLifecycle } from './job-lifecycle.js';
import { RecordWrites } from './record-writes.js';
import { RouterStore } from './router-store.js';
import { RunLifecycle } from './run-lifecycle.js';
import { ResponseReader } from './response-reader.js';
import { RunQueries, type ResponseFilter, type ResponsesPageRequest, type StoredResponsesPage } from './run-queries.js';
import type { ResponseRow } from './run-rows.js';
import { RunRemoval } from './run-removal.js';
import { StageProgress } from './stage-progress.js';

export type StoreOptions = ConnectionOptions;

export class Store {
  readonly path: string;
  readonly runs: RunLifecycle;
  readonly jobs: JobLifecycle;
  readonly records: RecordWrites;
  readonly stages: StageProgress;
  readonly queries: RunQueries;
  readonly removal: RunRemoval;
  private readonly connection: Connection;
  /** Prepared on first use: a read-only store of an older schema can still show its runs. */
  private routerRoom: RouterStore | undefined;
  /** Started on the first page read off the main thread. */
  private reader: ResponseReader | undefined;

  constructor(path: string, opts: StoreOptions = {}) {
    this.path = path;
    this.connection = new Connection(path, opts);
    try {
      const db = this.connection.db;
      this.queries = new RunQueries(db);
      this.runs = new RunLifecycle(db, this.queries);
      this.removal = new RunRemoval(db, this.queries);
      const hold = this.runs.hold.bind(this.runs);
      this.jobs = new JobLifecycle(db, hold, this.queries);
      const withoutSync = <T>(commit: () => T): T => this.connection.withoutSync(commit);
      this.records = new RecordWrites({ db, hold, withoutSync });
      this.stages = new StageProgress({ db, hold, withoutSync });
    } catch (err) {
      throw this.connection.abandon(err);
    }
  }

  /** The connection, for the rooms under core/store/ only (score-store.ts); every other caller goes through a room. */
  get db(): Database.Database {
    return this.connection.db;
  }

  get router(): RouterStore {
    this.routerRoom ??= new RouterStore(this.connection);
    return this.routerRoom;
  }

  /**
   * One page of a run's records, its SQL made here and run in the reader's thread on a read-only
   * connection, so a sort or a search that must scan a million records holds no event loop.
   */
  async readResponses(runId: string, filter: ResponseFilter, page: ResponsesPageRequest): Promise<StoredResponsesPage> {
    const query = this.queries.responsesQuery(runId, filter, page);
    if (query === null) return { items: [], nextCursor: null, nextAfter: null };
    // An in-memory database has no file another connection could open.
    if (this.path === ':memory:') return this.queries.responsesPage(query, this.db.prepare<Record<string, unknown>, ResponseRow>(query.sql).all(query.params));
    this.reader ??= new ResponseReader({ path: this.path, nativeBinding: this.connection.nativeBinding });
    return this.queries.responsesPage(query, await this.reader.rows(query.sql, query.params));
  }

  close(): void {
    this.reader?.close();
    this.connection.close();
  }

  /** A commit without its fsync, made durable by `syncWal` or the next synchronous commit (see connection.ts). */
  withoutSync<T>(commit: () => T): T {
    return this.connection.withoutSync(commit);
  }

  /** Makes every commit so far durable: one fdatasync of the write-ahead log. */
  syncWal(): void {
    this.connection.syncWal();
  }

  schemaVersion(): number {
    return this.connection.schemaVersion();
  }

  /** Changes when another process commits to this database, never for this connection's own commits. */
  dataVersion(): number {
    return this.connection.dataVersion();
  }

  integrityCheck(): string {
    return this.connection.integrityCheck();
  }
}
