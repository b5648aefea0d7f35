/**
 * RecordLander: lands the records of a run's jobs in group commits. Each job attempt writes to a
 * sink that only buffers; one transaction lands what every sink holds (then one append to
 * responses.jsonl), `maxDelayMs` after the first record waits or as soon as `maxBatch` records
 * wait across the run. A run so makes at most ~10 commits a second when calls are slow, one fsync
 * each, however many jobs are in flight: with a timer per job, 50 jobs would make 500 fsyncs a
 * second and keep the event loop blocked for much of it. At full speed a commit carries `maxBatch` records,
 * which keeps each one around a millisecond so the event loop stays responsive.
 * A commit that fails (disk full, the database locked past its timeout) keeps its records buffered
 * and is tried again after `maxDelayMs`: nothing is lost, and nothing throws into the worker that
 * delivered a record or out of a timer.
 * Runs on: Node (core).
 */
import type { Logger } from 'pino';
import type { JobId, ResponseRecord, StoredResponse } from '../domain.js';
import type { Store } from '../store/store.js';
import type { JobSink } from '../workers/worker-handle.js';
import type { ResponseLog } from './response-log.js';

export interface RecordLanderOptions {
  /** Records waiting, across the run's jobs, that trigger a commit at once (default 64). */
  maxBatch?: number;
  /** Longest a record waits before it is committed (default 100 ms: few commits when calls are slow, and no slower than the events the UI sees). */
  maxDelayMs?: number;
  logger?: Logger;
}

/** One job attempt's sink: buffers until the lander's next commit. */
export class AttemptSink implements JobSink {
  /** Records waiting for the next commit. */
  buffer: ResponseRecord[] = [];
  /** Set once drained or closed: the attempt is settled, and a late record would be refused anyway. */
  detached = false;

  constructor(
    private readonly lander: RecordLander,
    readonly jobId: JobId,
    readonly attempt: number,
    readonly onLanded: ((records: StoredResponse[]) => void) | undefined,
  ) {}

  record(record: ResponseRecord): void {
    if (this.detached) return;
    this.buffer.push(record);
    this.lander.buffered(1);
  }

  /** Hands back what is still buffered without writing it (the job outcome's transaction lands it) and detaches the sink. */
  drain(): ResponseRecord[] {
    const rest = this.buffer;
    this.lander.detach(this, rest.length);
    return rest;
  }

  /** Lands what is still buffered now (with whatever else waits) and detaches the sink: what landed before a failure stays landed. */
  close(): void {
    this.lander.flush();
    this.lander.detach(this, this.buffer.length);
  }
}

export class RecordLander {
  private readonly sinks = new Set<AttemptSink>();
  private waiting = 0;
  private timer: NodeJS.Timeout | null = null;
  /** Set while commits fail: wait for the timer instead of retrying on every record. */
  private failing = false;
  private readonly maxBatch: number;
  private readonly maxDelayMs: number;

  constructor(
    private readonly store: Store,
    private readonly log: ResponseLog,
    private readonly opts: RecordLanderOptions = {},
  ) {
    this.maxBatch = opts.maxBatch ?? 64;
    this.maxDelayMs = opts.maxDelayMs ?? 100;
  }

  /** A sink for one attempt of a job; `onLanded` hears of that job's records as they land. */
  sink(jobId: JobId, attempt: number, onLanded?: (records: StoredResponse[]) => void): AttemptSink {
    const sink = new AttemptSink(this, jobId, attempt, onLanded);
    this.sinks.add(sink);
    return sink;
  }

  /** A sink took `n` records. */
  buffered(n: number): void {
    this.waiting += n;
    if (this.waiting >= this.maxBatch && !this.failing) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.maxDelayMs);
  }

  /** A sink leaves, handing back (or having landed) its `unlanded` records. */
  detach(sink: AttemptSink, unlanded: number): void {
    if (!this.sinks.delete(sink)) return;
    this.waiting -= unlanded;
    sink.buffer = [];
    sink.detached = true;
  }

  /** Lands every sink's buffer in one transaction, then appends what landed to responses.jsonl in sequence order. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const sinks = [...this.sinks].filter((s) => s.buffer.length > 0);
    if (sinks.length === 0) return;
    let landed: StoredResponse[][];
    try {
      landed = this.store.appendRecordBatches(sinks.map((s) => ({ jobId: s.jobId, attempt: s.attempt, records: s.buffer })));
    } catch (err) {
      this.failing = true;
      this.opts.logger?.error({ err, records: this.waiting }, 'could not land records; keeping them to try again');
      this.timer = setTimeout(() => this.flush(), this.maxDelayMs);
      return;
    }
    this.failing = false;
    for (const s of sinks) {
      // A stale attempt's records were refused: its work is moot, a newer attempt poses them again.
      this.waiting -= s.buffer.length;
      s.buffer = [];
    }
    for (const [i, s] of sinks.entries()) {
      const records = landed[i]!;
      if (records.length === 0) continue;
      this.appendToLog(records);
      s.onLanded?.(records);
    }
  }

  /** Appends records a job outcome's own transaction landed. */
  appendToLog(records: readonly StoredResponse[]): void {
    try {
      this.log.append(records);
    } catch (err) {
      // The records are in the database; reopening the run's log completes it from there.
      this.opts.logger?.error({ err, path: this.log.path }, 'could not append to responses.jsonl');
    }
  }

  /** Lands whatever waits and stops the timer (the run is over). */
  close(): void {
    this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
