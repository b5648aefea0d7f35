/**
 * The Store: the only code that speaks SQL. SQLite through better-sqlite3 in WAL mode. Every write
 * that must be atomic is one IMMEDIATE transaction; every aggregate is SQL.
 *
 * Durability: commits are synchronous (synchronous=FULL), so nothing acknowledged is lost on
 * kill -9 or power loss, except the two kinds a sweep makes by the thousand, which commit
 * `withoutSync`: a run's records (synced by the record lander within a second) and the router's
 * metrics and cache entries. In WAL mode such a commit still survives the process being killed; an
 * OS crash or power loss can undo it only until the next synchronous commit or `syncWal()`, each
 * of which syncs every commit before it. What such a loss undoes is redone: a job's progress is
 * counted from the same rows as its records. An fsync costs the whole machine far more than the
 * commit it ends.
 * Runs on: Node (core).
 */
import { closeSync, fdatasyncSync, openSync, readSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import {
  PanoptesError,
  type IndexedVignette,
  type Job,
  type JobId,
  type JobStatus,
  type ModelUsage,
  type Run,
  type RunId,
  type HostWait,
  type RunOptions,
  type RunPrices,
  type RunStatus,
  type VignetteFailure,
  type StoredResponse,
  type Usage,
} from '../domain.js';
import { MIGRATIONS } from './migrations.js';
import { RunLostError, type RunFence } from './run-fence.js';
import { RecordWrites } from './record-writes.js';
import { parseStoredRunOptions } from './run-options.js';

export interface StoreOptions {
  /** Milliseconds a writer waits for another process's lock before failing. */
  busyTimeoutMs?: number;
  readonly?: boolean;
  /** Path of a better-sqlite3 addon built for another ABI (Electron's); default: the Node build in node_modules. */
  nativeBinding?: string;
}

export interface NewRun {
  id: RunId;
  manifestPath: string;
  models: string[];
  epochs: number;
  vignetteCount: number;
  options: RunOptions;
  /** The prices the run is costed at, for good (later catalogs do not change a run's cost). */
  prices?: RunPrices;
}

export interface ResponseFilter {
  model?: string;
  epoch?: number;
  vignetteId?: string;
  /** Substring of the response text (case-insensitive). */
  text?: string;
}

export interface ResponsesPage {
  items: StoredResponse[];
  /** Pass back as `cursor` for the next page; null at the end. */
  nextCursor: number | null;
}

export interface RunListOptions {
  limit?: number;
  status?: RunStatus;
}

/** What a run's last job leaves behind: the run's final status and the reason when it failed. */
export interface RunSettlement {
  run: Run;
  /** True the first time the run reached a terminal status. */
  changed: boolean;
}

interface RunRow {
  id: string;
  manifest_path: string;
  models: string;
  epochs: number;
  vignette_count: number;
  status: RunStatus;
  job_count: number;
  done_count: number;
  failed_count: number;
  options: string;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  error: string | null;
  owner: string | null;
  lease_until: number | null;
}

interface JobRow {
  id: number;
  run_id: string;
  model: string;
  epoch: number;
  status: JobStatus;
  attempt: number;
  worker_id: string | null;
  vignettes_done: number;
  input_tokens: number;
  output_tokens: number;
  started_at: number | null;
  finished_at: number | null;
  error: string | null;
  waiting_for_host: string | null;
  vignette_count: number;
}

interface VignetteFailureRow {
  job_id: number;
  vignette_idx: number;
  vignette_id: string;
  model: string;
  epoch: number;
  attempts: number;
  code: string;
  message: string;
  at: number;
}

interface ResponseRow {
  seq: number;
  job_id: number;
  vignette_idx: number;
  response: string;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  latency_ms: number;
  host: string;
  cached: number;
  finished_at: number;
  run_id: string;
  model: string;
  epoch: number;
  vignette_id: string;
  prompt: string;
  system: string | null;
  target: string | null;
  metadata: string | null;
  options: string;
}

interface VignetteRow {
  idx: number;
  vignette_id: string;
  prompt: string;
  system: string | null;
  target: string | null;
  metadata: string | null;
}

const JOB_COLUMNS = `j.id, j.run_id, j.model, j.epoch, j.status, j.attempt, j.worker_id, j.vignettes_done,
  j.input_tokens, j.output_tokens, j.started_at, j.finished_at, j.error, j.waiting_for_host, r.vignette_count`;

interface UsageRow {
  model: string;
  input: number;
  output: number;
  calls: number;
  cached_calls: number;
  cached_input: number;
  cached_output: number;
}

const USAGE_COLUMNS = `model, SUM(input_tokens) AS input, SUM(output_tokens) AS output, SUM(vignettes_done) AS calls,
  SUM(cached_calls) AS cached_calls, SUM(cached_input_tokens) AS cached_input, SUM(cached_output_tokens) AS cached_output`;

const RESPONSE_COLUMNS = `s.seq, s.job_id, s.vignette_idx, s.response, s.input_tokens, s.output_tokens,
  s.cached_tokens, s.reasoning_tokens, s.latency_ms, s.host, s.cached, s.finished_at,
  j.run_id, j.model, j.epoch, v.vignette_id, v.prompt, v.system, v.target, v.metadata, r.options`;

// CROSS JOIN keeps responses the outer loop, walked in seq order: a page (`seq > cursor ... LIMIT n`)
// then reads n rows, where letting SQLite start from the run's jobs sorted the whole run per page.
/** One vignette's records: from the run's jobs through the unique (job, vignette) key. */
const VIGNETTE_RESPONSE_JOINS = `FROM jobs j
  CROSS JOIN responses s ON s.job_id = j.id AND s.vignette_idx = @idx
  JOIN runs r ON r.id = j.run_id
  JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx`;

const RESPONSE_JOINS = `FROM responses s
  CROSS JOIN jobs j ON j.id = s.job_id
  JOIN runs r ON r.id = j.run_id
  JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx`;

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * better-sqlite3's addon built for Node, where its install puts it. Given by path, the addon loads
 * at once; left to better-sqlite3, its `bindings` lookup reads a stack trace and probes a dozen
 * folders first: several milliseconds of every `panoptes runs` and `stats`.
 */
function nodeAddonPath(): string {
  const pkg = createRequire(import.meta.url).resolve('better-sqlite3/package.json');
  return join(dirname(pkg), 'build', 'Release', 'better_sqlite3.node');
}

/**
 * A database file is opened only when it is one: a missing file is created (read-write) or
 * reported (read-only); an empty file or one that is not SQLite is refused with its path, never
 * taken for a new database and written over.
 */
function checkDatabaseFile(path: string, readonly: boolean): void {
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
function refuseForeignSchema(db: Database.Database, path: string): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  const tables = (db.prepare(`SELECT COUNT(*) AS n FROM sqlite_master`).get() as { n: number }).n;
  if (version === 0 && tables > 0) {
    throw new PanoptesError('invalid_input', `${path} is another program's SQLite database, not a Panoptes database: choose another --data-dir`, { where: path });
  }
}

/** What went wrong opening the database, in one line naming the file or its folder. */
function openError(err: unknown, path: string): unknown {
  if (err instanceof PanoptesError) return err;
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

/** This process, as an owner of runs: host and pid tell a crashed owner from a live one. */
export function processOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

export function ownerIsDeadLocally(owner: string | null): boolean {
  if (!owner) return true;
  const [host, pidText] = owner.split(':');
  if (host !== hostname()) return false;
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return true;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

export class Store {
  readonly db: Database.Database;
  readonly path: string;

  private readonly stmt: ReturnType<Store['prepareStatements']>;
  /** The SQL that lands records (record-writes.ts): the job ledger's and the lander's way in. */
  readonly records: RecordWrites;
  /** The write-ahead log, opened on the first `syncWal`. */
  private walFd: number | undefined;

  constructor(path: string, opts: StoreOptions = {}) {
    this.path = path;
    if (path !== ':memory:') checkDatabaseFile(path, opts.readonly ?? false);
    this.db = new Database(path, { readonly: opts.readonly ?? false, nativeBinding: opts.nativeBinding ?? nodeAddonPath() });
    try {
      this.db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 10_000}`);
      if (path !== ':memory:') refuseForeignSchema(this.db, path);
      if (!opts.readonly) {
        this.db.pragma('journal_mode = WAL');
        this.db.pragma('synchronous = FULL');
        this.db.pragma('foreign_keys = ON');
        this.migrate();
      }
      this.stmt = this.prepareStatements();
      this.records = new RecordWrites({
        db: this.db,
        hold: (fence) => this.hold(fence),
        withoutSync: (commit) => this.withoutSync(commit),
        jobGuard: this.stmt.jobGuard,
      });
    } catch (err) {
      this.db.close();
      throw openError(err, path);
    }
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
    this.db.pragma('synchronous = NORMAL');
    try {
      return commit();
    } finally {
      this.db.pragma('synchronous = FULL');
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
          this.db.exec(m.sql);
          this.db.pragma(`user_version = ${m.version}`);
        })
        .immediate();
    }
  }

  schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  private prepareStatements() {
    const db = this.db;
    return {
      insertVignette: db.prepare(
        `INSERT INTO vignettes (run_id, idx, vignette_id, prompt, system, target, metadata)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertRun: db.prepare(
        `INSERT INTO runs (id, manifest_path, models, epochs, vignette_count, status, job_count, options, created_at)
         VALUES (@id, @manifestPath, @models, @epochs, @vignetteCount, 'queued', @jobCount, @options, @createdAt)`,
      ),
      getRun: db.prepare<[string], RunRow>(`SELECT * FROM runs WHERE id = ?`),
      claimNext: db.prepare<[string, number, number], RunRow>(
        `UPDATE runs SET status = 'running', owner = ?, lease_until = ?, started_at = COALESCE(started_at, ?)
         WHERE id = (SELECT id FROM runs WHERE status = 'queued' ORDER BY created_at, rowid LIMIT 1)
         RETURNING *`,
      ),
      claimOne: db.prepare<[string, number, number, string], RunRow>(
        `UPDATE runs SET status = 'running', owner = ?, lease_until = ?, started_at = COALESCE(started_at, ?)
         WHERE id = ? AND status = 'queued' RETURNING *`,
      ),
      renewLease: db.prepare(`UPDATE runs SET lease_until = ? WHERE id = ? AND owner = ? AND status = 'running'`),
      holdRun: db.prepare(
        `UPDATE runs SET lease_until = MAX(COALESCE(lease_until, 0), ?) WHERE id = ? AND owner = ? AND status = 'running'`,
      ),
      runningRuns: db.prepare<[], Pick<RunRow, 'id' | 'owner' | 'lease_until'>>(
        `SELECT id, owner, lease_until FROM runs WHERE status = 'running'`,
      ),
      requeueRun: db.prepare(
        `UPDATE runs SET status = 'queued', owner = NULL, lease_until = NULL
         WHERE id = ? AND status = 'running' AND (owner IS ? OR owner = ?)`,
      ),
      requeueJobs: db.prepare(`UPDATE jobs SET status = 'pending' WHERE run_id = ? AND status = 'running'`),
      insertJob: db.prepare(
        `INSERT INTO jobs (run_id, model, epoch, status) VALUES (?, ?, ?, 'pending')
         ON CONFLICT (run_id, model, epoch) DO NOTHING`,
      ),
      jobsOfRun: db.prepare<[string], JobRow>(
        `SELECT ${JOB_COLUMNS} FROM jobs j JOIN runs r ON r.id = j.run_id WHERE j.run_id = ? ORDER BY j.model, j.epoch`,
      ),
      getJob: db.prepare<[number], JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs j JOIN runs r ON r.id = j.run_id WHERE j.id = ?`),
      startAttempt: db.prepare<[string, number, number], { attempt: number }>(
        `UPDATE jobs SET attempt = attempt + 1, status = 'running', worker_id = ?, error = NULL,
           started_at = COALESCE(started_at, ?)
         WHERE id = ? AND status IN ('pending', 'running') RETURNING attempt`,
      ),
      landedCount: db.prepare<[number], { n: number }>(`SELECT COUNT(*) AS n FROM responses WHERE job_id = ?`),
      jobGuard: db.prepare<[number], { status: JobStatus; attempt: number; run_id: string; vignettes_done: number; vignette_count: number }>(
        `SELECT j.status, j.attempt, j.run_id, j.vignettes_done, r.vignette_count
         FROM jobs j JOIN runs r ON r.id = j.run_id WHERE j.id = ?`,
      ),
      runSeqRange: db.prepare<[string], { lo: number | null; hi: number | null }>(
        `SELECT MIN(first_seq) AS lo, MAX(last_seq) AS hi FROM jobs WHERE run_id = ?`,
      ),
      vignetteIndex: db.prepare<[string, string], { idx: number }>(
        `SELECT idx FROM vignettes WHERE run_id = ? AND vignette_id = ?`,
      ),
      markJobFailed: db.prepare(`UPDATE jobs SET status = 'failed', finished_at = ?, error = ?, waiting_for_host = NULL WHERE id = ?`),
      setJobWaiting: db.prepare(`UPDATE jobs SET waiting_for_host = ? WHERE id = ? AND attempt = ? AND status = 'running'`),
      putVignetteFailure: db.prepare(
        `INSERT INTO vignette_failures (job_id, vignette_idx, attempts, code, message, at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (job_id, vignette_idx) DO UPDATE SET attempts = excluded.attempts, code = excluded.code,
           message = excluded.message, at = excluded.at`,
      ),
      vignetteFailures: db.prepare<[string, number], VignetteFailureRow>(
        `SELECT f.job_id, f.vignette_idx, v.vignette_id, j.model, j.epoch, f.attempts, f.code, f.message, f.at
         FROM vignette_failures f JOIN jobs j ON j.id = f.job_id
           JOIN vignettes v ON v.run_id = j.run_id AND v.idx = f.vignette_idx
         WHERE j.run_id = ? ORDER BY j.model, j.epoch, f.vignette_idx LIMIT ?`,
      ),
      vignetteFailureCount: db.prepare<[string], { n: number }>(
        `SELECT COUNT(*) AS n FROM vignette_failures f JOIN jobs j ON j.id = f.job_id WHERE j.run_id = ?`,
      ),
      runWaiting: db.prepare<[string], { waiting_for_host: string }>(
        `SELECT waiting_for_host FROM jobs WHERE run_id = ? AND waiting_for_host IS NOT NULL
         ORDER BY json_extract(waiting_for_host, '$.since') LIMIT 1`,
      ),
      runPrices: db.prepare<[string], { prices: string | null }>(`SELECT prices FROM runs WHERE id = ?`),
      anyRunWithoutPrices: db.prepare<[], { any: number }>(`SELECT EXISTS (SELECT 1 FROM runs WHERE prices IS NULL) AS any`),
      setRunPrices: db.prepare(`UPDATE runs SET prices = ? WHERE id = ?`),
      noteJobError: db.prepare(`UPDATE jobs SET status = 'pending', error = ? WHERE id = ? AND attempt = ? AND status = 'running'`),
      bumpFailed: db.prepare(`UPDATE runs SET failed_count = failed_count + 1 WHERE id = ?`),
      failedJobs: db.prepare<[string], { model: string; epoch: number; error: string | null; gave_up: number }>(
        `SELECT model, epoch, error, EXISTS (SELECT 1 FROM vignette_failures f WHERE f.job_id = jobs.id) AS gave_up
         FROM jobs WHERE run_id = ? AND status = 'failed' ORDER BY model, epoch`,
      ),
      finishRun: db.prepare(
        `UPDATE runs SET status = ?, finished_at = ?, error = ?, owner = NULL, lease_until = NULL
         WHERE id = ? AND status IN ('queued', 'running')`,
      ),
      cancelJobs: db.prepare(
        `UPDATE jobs SET status = 'cancelled', finished_at = ? WHERE run_id = ? AND status IN ('pending', 'running')`,
      ),
      usageAll: db.prepare<[], UsageRow>(`SELECT ${USAGE_COLUMNS} FROM jobs GROUP BY model HAVING SUM(vignettes_done) > 0 ORDER BY model`),
      usageByRun: db.prepare<[], UsageRow & { run_id: string; prices: string | null }>(
        `SELECT j.run_id, r.prices, ${USAGE_COLUMNS} FROM jobs j JOIN runs r ON r.id = j.run_id
         GROUP BY j.run_id, j.model HAVING SUM(vignettes_done) > 0`,
      ),
      usageRun: db.prepare<[string], UsageRow>(`SELECT ${USAGE_COLUMNS} FROM jobs WHERE run_id = ? GROUP BY model ORDER BY model`),
      pendingVignettes: db.prepare<[string, number, number, number], VignetteRow>(
        `SELECT v.idx, v.vignette_id, v.prompt, v.system, v.target, v.metadata FROM vignettes v
          WHERE v.run_id = ? AND v.idx > ?
            AND NOT EXISTS (SELECT 1 FROM responses r WHERE r.job_id = ? AND r.vignette_idx = v.idx)
          ORDER BY v.idx LIMIT ?`,
      ),
      responsesPage: db.prepare<[string, number, number, number], ResponseRow>(
        `SELECT ${RESPONSE_COLUMNS} ${RESPONSE_JOINS} WHERE j.run_id = ? AND s.seq > ? AND s.seq <= ? ORDER BY s.seq LIMIT ?`,
      ),
      responseCount: db.prepare<[string], { n: number }>(
        `SELECT COALESCE(SUM(vignettes_done), 0) AS n FROM jobs WHERE run_id = ?`,
      ),
      deleteStagedVignettes: db.prepare(`DELETE FROM vignettes WHERE run_id = ?`),
      stage: db.prepare(`INSERT INTO staged_runs (run_id, created_at) VALUES (?, ?)`),
      unstage: db.prepare(`DELETE FROM staged_runs WHERE run_id = ?`),
      stagedRuns: db.prepare<[], { run_id: string }>(`SELECT run_id FROM staged_runs`),
    };
  }

  // ---- Creating runs -------------------------------------------------------------------------

  /**
   * Marks a run id as being created, so vignettes copied in before the run row exists are
   * cleaned up if the process dies half-way (see `discardAbandonedStaging`).
   */
  beginStaging(runId: RunId): void {
    this.stmt.stage.run(runId, Date.now());
  }

  /** Copies one batch of a new run's vignettes in, in one transaction. */
  stageVignettes(runId: RunId, vignettes: readonly IndexedVignette[]): void {
    this.db
      .transaction(() => {
        for (const v of vignettes) {
          this.stmt.insertVignette.run(
            runId,
            v.index,
            v.id,
            v.prompt,
            v.system ?? null,
            v.target ?? null,
            v.metadata === undefined ? null : JSON.stringify(v.metadata),
          );
        }
      })
      .immediate();
  }

  /** Throws away a run that failed during creation: it never existed. */
  discardStaging(runId: RunId): void {
    this.db
      .transaction(() => {
        this.stmt.deleteStagedVignettes.run(runId);
        this.stmt.unstage.run(runId);
      })
      .immediate();
  }

  /** Removes vignettes left by a process that died while creating a run. Call once at start-up. */
  discardAbandonedStaging(): number {
    const staged = this.stmt.stagedRuns.all();
    for (const s of staged) this.discardStaging(s.run_id);
    return staged.length;
  }

  /** Persists a run as `queued` (its vignettes staged already). Nothing runs yet. */
  insertRun(input: NewRun): Run {
    const createdAt = Date.now();
    this.db
      .transaction(() => {
        this.stmt.insertRun.run({
          id: input.id,
          manifestPath: input.manifestPath,
          models: JSON.stringify(input.models),
          epochs: input.epochs,
          vignetteCount: input.vignetteCount,
          jobCount: input.models.length * input.epochs,
          options: JSON.stringify(input.options),
          createdAt,
        });
        if (input.prices) this.stmt.setRunPrices.run(JSON.stringify(input.prices), input.id);
        this.stmt.unstage.run(input.id);
      })
      .immediate();
    return this.getRun(input.id)!;
  }

  // ---- Claiming and leasing --------------------------------------------------------------------

  /** Flips the oldest queued run to running for `owner`, atomically across processes. */
  claimNextRun(owner: string, leaseMs: number): Run | null {
    const now = Date.now();
    const row = this.db.transaction(() => this.stmt.claimNext.get(owner, now + leaseMs, now)).immediate();
    return row ? toRun(row) : null;
  }

  /** Claims one specific queued run (the CLI's `run` drives the run it created). */
  claimRun(runId: RunId, owner: string, leaseMs: number): Run | null {
    const now = Date.now();
    const row = this.db.transaction(() => this.stmt.claimOne.get(owner, now + leaseMs, now, runId)).immediate();
    return row ? toRun(row) : null;
  }

  renewLease(runId: RunId, owner: string, leaseMs: number): boolean {
    return this.stmt.renewLease.run(Date.now() + leaseMs, runId, owner).changes === 1;
  }

  /**
   * The fence of every write an owner makes for its run (see run-fence.ts): inside the caller's
   * transaction, checks that the run is still this owner's and running, and extends its lease.
   */
  private hold(fence: RunFence | undefined): void {
    if (!fence) return;
    if (this.stmt.holdRun.run(Date.now() + fence.leaseMs, fence.runId, fence.owner).changes !== 1) throw new RunLostError(fence.runId);
  }

  /** Runs `write` (a write outside the database, such as an append to responses.jsonl) only while the owner holds its run, with the database's write lock held so no takeover can come between the check and the write. */
  fenced<T>(fence: RunFence, write: () => T): T {
    return this.db
      .transaction(() => {
        this.hold(fence);
        return write();
      })
      .immediate();
  }

  /**
   * Puts runs whose owner is gone back in the queue: an owner on this host whose process is dead,
   * or any owner whose lease has lapsed. Their running jobs become pending; landed records stay.
   */
  recoverInterruptedRuns(): RunId[] {
    const now = Date.now();
    const recovered: RunId[] = [];
    for (const r of this.stmt.runningRuns.all()) {
      const lapsed = r.lease_until === null || r.lease_until < now;
      if (!lapsed && !ownerIsDeadLocally(r.owner)) continue;
      const changed = this.db
        .transaction(() => {
          const res = this.stmt.requeueRun.run(r.id, r.owner, r.owner);
          if (res.changes === 1) this.stmt.requeueJobs.run(r.id);
          return res.changes === 1;
        })
        .immediate();
      if (changed) recovered.push(r.id);
    }
    return recovered;
  }

  /** Hands a run this owner holds back to the queue (a scheduler stopping mid-run). */
  releaseRun(runId: RunId, owner: string): boolean {
    return this.db
      .transaction(() => {
        const res = this.stmt.requeueRun.run(runId, owner, owner);
        if (res.changes === 1) this.stmt.requeueJobs.run(runId);
        return res.changes === 1;
      })
      .immediate();
  }

  // ---- Jobs ------------------------------------------------------------------------------------

  /** Records a run's jobs; jobs that already exist (a resumed run) are kept as they are. */
  insertJobs(runId: RunId, jobs: ReadonlyArray<{ model: string; epoch: number }>, fence?: RunFence): Job[] {
    this.db
      .transaction(() => {
        this.hold(fence);
        for (const j of jobs) this.stmt.insertJob.run(runId, j.model, j.epoch);
      })
      .immediate();
    return this.jobs(runId);
  }

  jobs(runId: RunId): Job[] {
    return this.stmt.jobsOfRun.all(runId).map(toJob);
  }

  getJob(jobId: JobId): Job | null {
    const row = this.stmt.getJob.get(jobId);
    return row ? toJob(row) : null;
  }

  /** Starts the next attempt of a job on a worker; null if the job is already settled. */
  startAttempt(jobId: JobId, workerId: string, fence?: RunFence): number | null {
    const row = this.db
      .transaction(() => {
        this.hold(fence);
        return this.stmt.startAttempt.get(workerId, Date.now(), jobId);
      })
      .immediate();
    return row ? row.attempt : null;
  }

  /** Indexes of a job's vignettes whose records have landed: what a redelivered job must not pose again. */
  /** How many of the run's vignettes already have a record from this job. */
  landedCount(jobId: JobId): number {
    return this.stmt.landedCount.get(jobId)!.n;
  }

  /**
   * The run's vignettes that have no record from this job yet, in index order, read a page at a
   * time as the caller iterates: a job of a million vignettes never sits in memory whole, and no
   * statement stays open between pages, so the writes in between find the connection free. Pages
   * are small so that each lives only briefly (a page held for seconds would be promoted to the
   * old generation and linger there as garbage).
   */
  *pendingVignettes(runId: RunId, jobId: JobId, pageSize = 32): Generator<IndexedVignette, void, undefined> {
    let after = -1;
    for (;;) {
      const rows = this.stmt.pendingVignettes.all(runId, after, jobId, pageSize);
      for (const row of rows) yield toVignette(row);
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1]!.idx;
    }
  }

  /** Settles a job as failed for good (guarded like `records.settle`). */
  failJob(jobId: JobId, attempt: number, error: string, fence?: RunFence): boolean {
    return this.db
      .transaction(() => {
        this.hold(fence);
        const guard = this.stmt.jobGuard.get(jobId);
        if (!guard || guard.status !== 'running' || guard.attempt !== attempt) return false;
        this.stmt.markJobFailed.run(Date.now(), error, jobId);
        this.stmt.bumpFailed.run(guard.run_id);
        return true;
      })
      .immediate();
  }

  /** Shows (or, with null, clears) the host a job's calls are waiting for; only for its current attempt. */
  setJobWaiting(jobId: JobId, attempt: number, wait: HostWait | null): void {
    this.stmt.setJobWaiting.run(wait === null ? null : JSON.stringify(wait), jobId, attempt);
  }

  /**
   * Records a vignette the job gave up on (its attempts spent), with the last error. Only the job's
   * current attempt may: a stale worker's word changes nothing.
   */
  recordVignetteFailure(jobId: JobId, attempt: number, f: { vignetteIndex: number; attempts: number; code: string; message: string }): boolean {
    return this.db
      .transaction(() => {
        const guard = this.stmt.jobGuard.get(jobId);
        if (!guard || guard.status !== 'running' || guard.attempt !== attempt) return false;
        this.stmt.putVignetteFailure.run(jobId, f.vignetteIndex, f.attempts, f.code, f.message, Date.now());
        return true;
      })
      .immediate();
  }

  /** The vignettes a run gave up on, by model, epoch and manifest order (at most `limit`). */
  vignetteFailures(runId: RunId, limit = 1000): VignetteFailure[] {
    return this.stmt.vignetteFailures.all(runId, limit).map((r) => ({
      jobId: r.job_id,
      vignetteId: r.vignette_id,
      vignetteIndex: r.vignette_idx,
      model: r.model,
      epoch: r.epoch,
      attempts: r.attempts,
      code: r.code,
      message: r.message,
      at: r.at,
    }));
  }

  /** The host some job of the run is waiting for (the longest-waiting), or null. */
  waitingForHost(runId: RunId): HostWait | null {
    const row = this.stmt.runWaiting.get(runId);
    return row ? (JSON.parse(row.waiting_for_host) as HostWait) : null;
  }

  vignetteFailureCount(runId: RunId): number {
    return this.stmt.vignetteFailureCount.get(runId)!.n;
  }

  /** The prices a run is costed at, when it was created with them. */
  /** Whether a run made before runs kept their prices is stored here (it is priced by the catalog). */
  hasRunsWithoutPrices(): boolean {
    return this.stmt.anyRunWithoutPrices.get()!.any === 1;
  }

  runPrices(runId: RunId): RunPrices | null {
    const row = this.stmt.runPrices.get(runId);
    return row?.prices ? (JSON.parse(row.prices) as RunPrices) : null;
  }

  /** Notes a retryable failure: the job waits for its next attempt. */
  noteRetry(jobId: JobId, attempt: number, error: string, fence?: RunFence): void {
    this.db
      .transaction(() => {
        this.hold(fence);
        this.stmt.noteJobError.run(error, jobId, attempt);
      })
      .immediate();
  }

  // ---- Finishing runs --------------------------------------------------------------------------

  /**
   * Ends a run once no job is pending or running: `done` when every job landed, `failed` with a
   * reason naming the failed jobs otherwise.
   */
  settleRun(runId: RunId, fence?: RunFence): RunSettlement {
    return this.db
      .transaction(() => {
        this.hold(fence);
        const row = this.stmt.getRun.get(runId);
        if (!row) throw new PanoptesError('not_found', `no run ${runId}`);
        if (row.status !== 'running' && row.status !== 'queued') return { run: toRun(row), changed: false };
        let status: RunStatus = 'done';
        let error: string | null = null;
        if (row.done_count < row.job_count) {
          const options = parseStoredRunOptions(row.options);
          const failed = this.stmt.failedJobs.all(runId);
          // Jobs that failed as a whole (no worker, a refused key), not by giving up on some vignettes.
          const whole = failed.filter((f) => f.gave_up === 0);
          const givenUp = this.stmt.vignetteFailureCount.get(runId)!.n;
          // Done with failures only when the user chose so and no job failed as a whole.
          status = options.endWithFailures === 'done' && whole.length === 0 && givenUp > 0 ? 'done' : 'failed';
          const list = whole
            .slice(0, 5)
            .map((f) => `${f.model}@${f.epoch}: ${f.error ?? 'failed'}`)
            .join('; ');
          const more = whole.length > 5 ? `; and ${whole.length - 5} more` : '';
          const parts = [`${failed.length} of ${row.job_count} jobs failed${whole.length > 0 ? `: ${list}${more}` : ''}`];
          if (givenUp > 0) {
            const listed = this.stmt.vignetteFailures.all(runId, 10);
            const vlist = listed.map((f) => `${f.vignette_id} (${f.model}@${f.epoch}): ${f.message}`).join('; ');
            parts.push(`${givenUp} vignettes failed: ${vlist}${givenUp > listed.length ? `; and ${givenUp - listed.length} more` : ''}`);
          }
          error = parts.join('; ');
        }
        this.stmt.finishRun.run(status, Date.now(), error, runId);
        return { run: toRun(this.stmt.getRun.get(runId)!), changed: true };
      })
      .immediate();
  }

  /** Cancels a queued or running run and its unsettled jobs. Landed records stay. */
  cancelRun(runId: RunId, reason = 'cancelled by user'): Run {
    return this.db
      .transaction(() => {
        const row = this.stmt.getRun.get(runId);
        if (!row) throw new PanoptesError('not_found', `no run ${runId}`, { where: 'runId' });
        if (row.status === 'queued' || row.status === 'running') {
          const now = Date.now();
          this.stmt.cancelJobs.run(now, runId);
          this.stmt.finishRun.run('cancelled', now, reason, runId);
        }
        return toRun(this.stmt.getRun.get(runId)!);
      })
      .immediate();
  }

  /**
   * Puts a finished run's failed and cancelled jobs back to pending and the run back in the queue,
   * in one transaction; their records so far are kept, so each job re-poses only what it never
   * answered, the vignettes it gave up on included. Refused while the run is queued or running, and when no job failed or was cancelled.
   */
  retryFailedJobs(runId: RunId): Run {
    return this.db
      .transaction(() => {
        const row = this.stmt.getRun.get(runId);
        if (!row) throw new PanoptesError('not_found', `no run ${runId}`, { where: 'runId' });
        if (row.status === 'queued' || row.status === 'running') {
          throw new PanoptesError('conflict', `run ${runId} is ${row.status}: retry it once it has ended`, { where: 'runId' });
        }
        // The vignettes those jobs gave up on are posed again: they are failures no longer.
        this.db
          .prepare(`DELETE FROM vignette_failures WHERE job_id IN (SELECT id FROM jobs WHERE run_id = ? AND status IN ('failed', 'cancelled'))`)
          .run(runId);
        const reset = this.db
          .prepare(
            `UPDATE jobs SET status = 'pending', error = NULL, finished_at = NULL, waiting_for_host = NULL
             WHERE run_id = ? AND status IN ('failed', 'cancelled')`,
          )
          .run(runId).changes;
        // A failed run whose jobs all landed failed after them (its responses.jsonl could not be
        // written): taking it up again finishes what is left.
        if (reset === 0 && row.status !== 'failed') {
          throw new PanoptesError('conflict', `run ${runId} has no failed or cancelled job to retry`, { where: 'runId' });
        }
        this.db
          .prepare(
            `UPDATE runs SET status = 'queued', finished_at = NULL, error = NULL, owner = NULL, lease_until = NULL,
               failed_count = (SELECT COUNT(*) FROM jobs WHERE run_id = runs.id AND status = 'failed') WHERE id = ?`,
          )
          .run(runId);
        return toRun(this.stmt.getRun.get(runId)!);
      })
      .immediate();
  }

  /** Fails a run outright (e.g. a model no worker serves), cancelling its unsettled jobs. */
  failRun(runId: RunId, reason: string, fence?: RunFence): Run {
    return this.db
      .transaction(() => {
        this.hold(fence);
        const now = Date.now();
        this.stmt.cancelJobs.run(now, runId);
        this.stmt.finishRun.run('failed', now, reason, runId);
        return toRun(this.stmt.getRun.get(runId)!);
      })
      .immediate();
  }

  // ---- Reading ---------------------------------------------------------------------------------

  getRun(runId: RunId): Run | null {
    const row = this.stmt.getRun.get(runId);
    return row ? toRun(row) : null;
  }

  listRuns(opts: RunListOptions = {}): Run[] {
    const limit = Math.min(Math.max(opts.limit ?? 100, 1), 1000);
    const rows = opts.status
      ? this.db
          .prepare<[string, number], RunRow>(`SELECT * FROM runs WHERE status = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`)
          .all(opts.status, limit)
      : this.db.prepare<[number], RunRow>(`SELECT * FROM runs ORDER BY created_at DESC, rowid DESC LIMIT ?`).all(limit);
    return rows.map(toRun);
  }

  /**
   * SQLite's `PRAGMA data_version`: it changes when another connection (another process on this
   * data folder) commits, never for this connection's own commits. Reading it costs microseconds.
   */
  dataVersion(): number {
    return this.db.pragma('data_version', { simple: true }) as number;
  }

  /** The newest runs with what shows their progress, to tell which another process changed. */
  runProgress(limit: number): Array<{ id: RunId; status: RunStatus; doneCount: number; failedCount: number; calls: number }> {
    return this.db
      .prepare<[number], { id: string; status: RunStatus; done_count: number; failed_count: number; calls: number }>(
        `SELECT r.id, r.status, r.done_count, r.failed_count,
           (SELECT COALESCE(SUM(j.vignettes_done), 0) FROM jobs j WHERE j.run_id = r.id) AS calls
         FROM runs r ORDER BY r.created_at DESC, r.rowid DESC LIMIT ?`,
      )
      .all(limit)
      .map((r) => ({ id: r.id, status: r.status, doneCount: r.done_count, failedCount: r.failed_count, calls: r.calls }));
  }

  /** Each job of a run with what shows its progress (status, attempt, records landed). */
  jobProgress(runId: RunId): Array<{ id: JobId; status: JobStatus; attempt: number; done: number }> {
    return this.db
      .prepare<[string], { id: number; status: JobStatus; attempt: number; done: number }>(
        `SELECT id, status, attempt, vignettes_done AS done FROM jobs WHERE run_id = ?`,
      )
      .all(runId);
  }

  /** Runs still to finish: queued ones and those whose owner died. */
  unfinishedRunIds(): RunId[] {
    return this.db
      .prepare<[], { id: string }>(`SELECT id FROM runs WHERE status IN ('queued', 'running') ORDER BY created_at, rowid`)
      .all()
      .map((r) => r.id);
  }

  /**
   * Token totals per model from every landed record (tokens of records served from the prompt
   * cache counted apart: nobody billed them, but the answers carry them), as SQL over the per-job counters that each
   * record's transaction maintains (so the aggregate reads jobs, not a million responses).
   */
  usageByModel(runId?: RunId): ModelUsage[] {
    const rows = runId === undefined ? this.stmt.usageAll.all() : this.stmt.usageRun.all(runId);
    return rows.map((r) => ({
      model: r.model,
      inputTokens: r.input,
      outputTokens: r.output,
      calls: r.calls,
      cachedCalls: r.cached_calls,
      cachedInputTokens: r.cached_input,
      cachedOutputTokens: r.cached_output,
    }));
  }

  /** Token totals per (run, model), each with the prices its run was created with (null for a run without). */
  usageByRunAndModel(): Array<ModelUsage & { runId: RunId; prices: RunPrices | null }> {
    return this.stmt.usageByRun.all().map((r) => ({
      runId: r.run_id,
      prices: r.prices === null ? null : (JSON.parse(r.prices) as RunPrices),
      model: r.model,
      inputTokens: r.input,
      outputTokens: r.output,
      calls: r.calls,
      cachedCalls: r.cached_calls,
      cachedInputTokens: r.cached_input,
      cachedOutputTokens: r.cached_output,
    }));
  }

  /** Every record of a run, in sequence order: the run's results. */
  runResults(runId: RunId): StoredResponse[] {
    return [...this.iterateResponses(runId)];
  }

  /**
   * Streams a run's records with seq > afterSeq, in sequence order, without loading them all. Reads
   * a page at a time: a statement left open between yields would keep the connection busy and make
   * every write fail until the consumer (a slow HTTP client, say) finished.
   */
  *iterateResponses(runId: RunId, afterSeq = 0, pageSize = 1000): IterableIterator<StoredResponse> {
    const { lo, hi } = this.runSeqRange(runId);
    for (let cursor = Math.max(afterSeq, lo - 1); cursor < hi; ) {
      const rows = this.stmt.responsesPage.all(runId, cursor, hi, pageSize);
      for (const row of rows) yield toStoredResponse(row);
      if (rows.length < pageSize) return;
      cursor = rows[rows.length - 1]!.seq;
    }
  }

  responseCount(runId: RunId): number {
    return this.stmt.responseCount.get(runId)?.n ?? 0;
  }

  /** One page of a run's records, filtered, in sequence order (keyset pagination on seq). */
  /**
   * The seq range holding a run's records ({lo: 1, hi: 0} when it has none). Pages walk responses in
   * seq order within this range only, so another run's records never make a page slow.
   */
  private runSeqRange(runId: RunId): { lo: number; hi: number } {
    const r = this.stmt.runSeqRange.get(runId);
    return r && r.lo !== null && r.hi !== null ? { lo: r.lo, hi: r.hi } : { lo: 1, hi: 0 };
  }

  responses(runId: RunId, filter: ResponseFilter = {}, page: { limit?: number; cursor?: number } = {}): ResponsesPage {
    const limit = Math.min(Math.max(page.limit ?? 100, 1), 1000);
    const { lo, hi } = this.runSeqRange(runId);
    const params: Record<string, unknown> = { runId, cursor: Math.max(page.cursor ?? 0, lo - 1), hi, limit: limit + 1 };
    if (filter.vignetteId !== undefined) {
      // One vignette: its records are found through the (job, vignette) key, one per job, not by a scan.
      const v = this.stmt.vignetteIndex.get(runId, filter.vignetteId);
      if (!v) return { items: [], nextCursor: null };
      params.idx = v.idx;
    }
    const where = params.idx === undefined ? ['j.run_id = @runId', 's.seq > @cursor', 's.seq <= @hi'] : ['j.run_id = @runId', 's.seq > @cursor'];
    if (filter.model !== undefined) {
      where.push('j.model = @model');
      params.model = filter.model;
    }
    if (filter.epoch !== undefined) {
      where.push('j.epoch = @epoch');
      params.epoch = filter.epoch;
    }
    if (filter.text !== undefined && filter.text !== '') {
      where.push(`(instr(lower(s.response), lower(@text)) > 0 OR instr(lower(v.prompt), lower(@text)) > 0 OR instr(lower(v.vignette_id), lower(@text)) > 0)`);
      params.text = filter.text;
    }
    const from = params.idx === undefined ? RESPONSE_JOINS : VIGNETTE_RESPONSE_JOINS;
    const rows = this.db
      .prepare<Record<string, unknown>, ResponseRow>(
        `SELECT ${RESPONSE_COLUMNS} ${from} WHERE ${where.join(' AND ')} ORDER BY s.seq LIMIT @limit`,
      )
      .all(params);
    const items = rows.slice(0, limit).map(toStoredResponse);
    const nextCursor = rows.length > limit ? items[items.length - 1]!.seq : null;
    return { items, nextCursor };
  }

  integrityCheck(): string {
    return this.db.pragma('integrity_check', { simple: true }) as string;
  }
}

function toRun(row: RunRow): Run {
  return {
    id: row.id,
    manifestPath: row.manifest_path,
    models: JSON.parse(row.models) as string[],
    epochs: row.epochs,
    vignetteCount: row.vignette_count,
    status: row.status,
    jobCount: row.job_count,
    doneCount: row.done_count,
    failedCount: row.failed_count,
    options: parseStoredRunOptions(row.options),
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    error: row.error,
  };
}

function toJob(row: JobRow): Job {
  const usage: Usage = { inputTokens: row.input_tokens, outputTokens: row.output_tokens };
  return {
    id: row.id,
    runId: row.run_id,
    model: row.model,
    epoch: row.epoch,
    status: row.status,
    attempt: row.attempt,
    workerId: row.worker_id,
    vignettesDone: row.vignettes_done,
    vignetteCount: row.vignette_count,
    usage,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    error: row.error,
    waitingForHost: row.waiting_for_host === null ? null : (JSON.parse(row.waiting_for_host) as HostWait),
  };
}

function toVignette(row: VignetteRow): IndexedVignette {
  const v: IndexedVignette = { index: row.idx, id: row.vignette_id, prompt: row.prompt };
  if (row.system !== null) v.system = row.system;
  if (row.target !== null) v.target = row.target;
  if (row.metadata !== null) v.metadata = JSON.parse(row.metadata) as Record<string, unknown>;
  return v;
}

function toStoredResponse(row: ResponseRow): StoredResponse {
  const usage: Usage = { inputTokens: row.input_tokens, outputTokens: row.output_tokens };
  if (row.cached_tokens !== null) usage.cachedTokens = row.cached_tokens;
  if (row.reasoning_tokens !== null) usage.reasoningTokens = row.reasoning_tokens;
  const options = parseStoredRunOptions(row.options);
  const r: StoredResponse = {
    seq: row.seq,
    runId: row.run_id,
    jobId: row.job_id,
    vignetteId: row.vignette_id,
    vignetteIndex: row.vignette_idx,
    model: row.model,
    epoch: row.epoch,
    prompt: row.prompt,
    response: row.response,
    usage,
    latencyMs: row.latency_ms,
    host: row.host,
    cached: row.cached === 1,
    sampling: options.sampling,
    finishedAt: row.finished_at,
  };
  if (row.system !== null) r.system = row.system;
  if (row.target !== null) r.target = row.target;
  if (row.metadata !== null) r.metadata = JSON.parse(row.metadata) as Record<string, unknown>;
  return r;
}
