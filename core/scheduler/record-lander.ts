/**
 * RecordLander: lands the records of a run's jobs in group commits, and makes them durable within a
 * second. Each job attempt's worker delivers to one sink, which holds its records; one
 * transaction lands what every sink holds, `maxDelayMs` after the first record waits or as soon as `maxBatch` records wait
 * across the run, so a run makes at most ~10 commits a second when calls are slow however many
 * jobs are in flight (with a timer per job, 50 jobs would make 500). At full speed a commit carries
 * `maxBatch` records, which keeps each one around a millisecond so the event loop stays responsive.
 *
 * A commit lands its records without an fsync of its own: in WAL mode it already survives the
 * process being killed, and its records count and show at once. What an OS crash or power loss
 * could still undo is made durable by one fsync of the write-ahead log `syncEveryMs` after the
 * last (or as soon as `maxUnsynced` records wait, and when the run ends); only then are the
 * records appended to responses.jsonl, so the file never holds a record the database could lose.
 * An fsync per commit costs the whole machine far more than the commit: on a 2-core box ten a
 * second made a 50 ms sweep 0.5% slower. A power cut so loses at most the last second of answers,
 * which the job poses again when it resumes (its progress is counted from the same rows).
 *
 * A commit that fails (disk full, the database locked past its timeout) keeps its records buffered
 * and is tried again after `maxDelayMs`; a sync that fails is tried again after `syncEveryMs`:
 * nothing is lost, and nothing throws into the worker that delivered a record or out of a timer.
 * Runs on: Node (core).
 */
import type { Logger } from 'pino';
import type { JobId, ResponseRecord, StoredResponse } from '../domain.js';
import { RunLostError, type RunFence } from '../store/run-fence.js';
import type { Store } from '../store/store.js';
import type { JobSink } from '../workers/worker-handle.js';
import type { ResponseLog } from './response-log.js';

export interface RecordLanderOptions {
  /** Records waiting, across the run's jobs, that trigger a commit at once (default 64). */
  maxBatch?: number;
  /** Longest a record waits before it is committed (default 100 ms: few commits when calls are slow, and no slower than the events the UI sees). */
  maxDelayMs?: number;
  /** Longest a landed record waits to be made durable and appended to responses.jsonl (default 1,000 ms). */
  syncEveryMs?: number;
  /**
   * Landed records that trigger a sync at once (default 256): at full speed a second's records
   * would live long enough to reach V8's old generation, and RSS grows about four times what lives
   * there; 256 records wait a few tens of milliseconds.
   */
  maxUnsynced?: number;
  logger?: Logger;
  /** The owner's fence: every commit and every append to responses.jsonl checks it in its transaction. */
  fence?: RunFence;
  /** Called once when a fenced write finds the run gone to another process; the lander then writes nothing more. */
  onLost?: () => void;
}

/** What an attempt reports besides its records, noted at once by whoever began it (the job ledger). */
export type AttemptNotes = Omit<JobSink, 'record'>;

/**
 * The one sink of a job attempt: its worker delivers here. A record waits in the sink until the
 * lander's next commit (which it may trigger); give-ups, waits and staged calls go straight to the
 * attempt's notes.
 */
export class AttemptSink implements JobSink {
  /** Records taken and not landed yet, for the lander's next commit; null once detached (a late record is dropped: it would be refused anyway). */
  waitingRecords: ResponseRecord[] | null = [];
  readonly gaveUp?: NonNullable<AttemptNotes['gaveUp']>;
  readonly waiting?: NonNullable<AttemptNotes['waiting']>;
  readonly stage?: NonNullable<AttemptNotes['stage']>;

  constructor(
    private readonly lander: RecordLander,
    readonly jobId: JobId,
    readonly attempt: number,
    readonly onLanded: ((records: StoredResponse[]) => void) | undefined,
    notes: AttemptNotes = {},
  ) {
    if (notes.gaveUp) this.gaveUp = notes.gaveUp;
    if (notes.waiting) this.waiting = notes.waiting;
    if (notes.stage) this.stage = notes.stage;
  }

  record(record: ResponseRecord): void {
    if (this.waitingRecords === null) return;
    this.waitingRecords.push(record);
    this.lander.took();
  }

  /** Hands back what still waits without writing it (the job outcome's transaction lands it) and detaches the sink. */
  drain(): ResponseRecord[] {
    return this.lander.detach(this);
  }

  /** Lands what still waits now (with whatever else waits) and detaches the sink: what landed before a failure stays landed. */
  close(): void {
    this.lander.flush();
    this.lander.detach(this);
  }
}

export class RecordLander {
  /** The attached sinks, whose records the next commit lands; a detached sink is not here. */
  private readonly sinks = new Set<AttemptSink>();
  private waiting = 0;
  private timer: NodeJS.Timeout | null = null;
  /** Set while commits fail: wait for the timer instead of retrying on every record. */
  private failing = false;
  private readonly maxBatch: number;
  private readonly maxDelayMs: number;
  private readonly syncEveryMs: number;
  private readonly maxUnsynced: number;
  /** Landed records not yet synced, in sequence order: responses.jsonl takes them once they are durable. */
  private unsynced: StoredResponse[] = [];
  /** Set while syncs fail: wait for the timer instead of retrying on every commit. */
  private syncFailing = false;
  private lastSyncAt = -Infinity;
  private syncTimer: NodeJS.Timeout | null = null;
  /** Set once a fenced write was refused: the run is another process's now. */
  private lost = false;

  constructor(
    private readonly store: Store,
    private readonly log: ResponseLog,
    private readonly opts: RecordLanderOptions = {},
  ) {
    this.maxBatch = opts.maxBatch ?? 64;
    this.maxDelayMs = opts.maxDelayMs ?? 100;
    this.syncEveryMs = opts.syncEveryMs ?? 1000;
    this.maxUnsynced = opts.maxUnsynced ?? 256;
  }

  /**
   * The sink of one attempt of a job: `onLanded` hears of that job's records as they land, `notes`
   * of the rest the attempt reports.
   */
  sink(jobId: JobId, attempt: number, onLanded?: (records: StoredResponse[]) => void, notes?: AttemptNotes): AttemptSink {
    const sink = new AttemptSink(this, jobId, attempt, onLanded, notes);
    this.sinks.add(sink);
    return sink;
  }

  /** A sink took a record: it waits for the next commit, which it may trigger. */
  took(): void {
    this.waiting += 1;
    if (this.lost) return;
    if (this.waiting >= this.maxBatch && !this.failing) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.maxDelayMs);
  }

  /** A sink leaves: hands back what of its records still waits, which the lander no longer lands. */
  detach(sink: AttemptSink): ResponseRecord[] {
    const rest = sink.waitingRecords ?? [];
    sink.waitingRecords = null;
    if (this.sinks.delete(sink)) this.waiting -= rest.length;
    return rest;
  }

  /** Lands every sink's buffer in one transaction; responses.jsonl gets what landed once it is synced. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.lost) return;
    const waiting: [AttemptSink, ResponseRecord[]][] = [];
    for (const s of this.sinks) if (s.waitingRecords !== null && s.waitingRecords.length > 0) waiting.push([s, s.waitingRecords]);
    if (waiting.length === 0) return;
    let landed: StoredResponse[][];
    try {
      landed = this.store.records.appendBatches(
        waiting.map(([s, records]) => ({ jobId: s.jobId, attempt: s.attempt, records })),
        this.opts.fence,
      );
    } catch (err) {
      if (err instanceof RunLostError) return this.runLost();
      this.failing = true;
      this.opts.logger?.error({ err, records: this.waiting }, 'could not land records; keeping them to try again');
      this.timer = setTimeout(() => this.flush(), this.maxDelayMs);
      return;
    }
    this.failing = false;
    for (const [s, records] of waiting) {
      // A stale attempt's records were refused: its work is moot, a newer attempt poses them again.
      this.waiting -= records.length;
      s.waitingRecords = [];
    }
    for (const [i, [s]] of waiting.entries()) {
      const records = landed[i]!;
      if (records.length === 0) continue;
      this.unsynced.push(...records);
      s.onLanded?.(records);
    }
    if (this.unsynced.length === 0) return;
    const wait = this.lastSyncAt + this.syncEveryMs - performance.now();
    if ((wait <= 0 || this.unsynced.length >= this.maxUnsynced) && !this.syncFailing) this.sync();
    else this.syncTimer ??= setTimeout(() => this.sync(), Math.max(0, wait));
  }

  /** Makes every landed record durable (one fsync of the write-ahead log), then appends them to responses.jsonl. */
  sync(): void {
    if (this.syncTimer) {
      clearTimeout(this.syncTimer);
      this.syncTimer = null;
    }
    if (this.unsynced.length === 0 || this.lost) return;
    try {
      this.store.syncWal();
    } catch (err) {
      this.syncFailing = true;
      this.opts.logger?.error({ err }, 'could not sync landed records; trying again');
      this.syncTimer = setTimeout(() => this.sync(), this.syncEveryMs);
      return;
    }
    this.syncFailing = false;
    this.synced();
  }

  /**
   * Appends the records a job outcome's own transaction landed. A commit that settled the job was
   * synchronous: it made every record landed before it durable too, and those go first, in
   * sequence order. One that was refused (a stale or duplicate outcome) wrote nothing and synced
   * nothing.
   */
  outcomeLanded(outcome: { landed: boolean; records: readonly StoredResponse[] }): void {
    if (outcome.landed) this.synced(outcome.records);
  }

  /** Everything landed so far is durable: append it (and `more`, landed after it) to responses.jsonl. */
  private synced(more: readonly StoredResponse[] = []): void {
    this.lastSyncAt = performance.now();
    const records = this.unsynced.concat(more);
    this.unsynced = [];
    try {
      // Only the run's owner appends: the check and the append share the database's write lock.
      if (this.opts.fence) {
        const fence = this.opts.fence;
        this.store.runs.fenced(fence, () => this.log.append(records));
      } else this.log.append(records);
    } catch (err) {
      if (err instanceof RunLostError) return this.runLost();
      // The records are in the database; reopening the run's log completes it from there.
      this.opts.logger?.error({ err, path: this.log.path }, 'could not append to responses.jsonl');
    }
  }

  /** The run went to another process: drop what waits (the new owner poses it again) and write nothing more. */
  private runLost(): void {
    this.lost = true;
    this.unsynced = [];
    for (const s of this.sinks) s.waitingRecords = null;
    this.sinks.clear();
    this.waiting = 0;
    if (this.timer) clearTimeout(this.timer);
    if (this.syncTimer) clearTimeout(this.syncTimer);
    this.timer = null;
    this.syncTimer = null;
    this.opts.logger?.warn('the run is held by another process now; this process lands nothing more of it');
    this.opts.onLost?.();
  }

  /** Lands and syncs whatever waits and stops the timers (the run is over). */
  close(): void {
    this.flush();
    this.sync();
    if (this.timer) clearTimeout(this.timer);
    if (this.syncTimer) clearTimeout(this.syncTimer);
    this.timer = null;
    this.syncTimer = null;
  }
}
