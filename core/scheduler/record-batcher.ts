/**
 * The JobSink the scheduler gives a worker: it buffers records and lands them in batches (one
 * transaction per batch, then one append to responses.jsonl), so a sweep of a million records
 * neither holds them in memory nor pays a transaction per record.
 * Runs on: Node (core).
 */
import type { JobId, ResponseRecord, StoredResponse } from '../domain.js';
import type { Store } from '../store/store.js';
import type { JobSink } from '../workers/worker-handle.js';
import type { ResponseLog } from './response-log.js';

export interface RecordBatcherOptions {
  /** Records per batch (default 64: one batch's transaction stays around a millisecond, so the event loop stays responsive). */
  maxBatch?: number;
  /** Longest a record waits before its batch is written (default 100 ms: few transactions when calls are slow, and no slower than the events the UI sees). */
  maxDelayMs?: number;
  onLanded?: (records: StoredResponse[]) => void;
}

export class RecordBatcher implements JobSink {
  private buffer: ResponseRecord[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly maxBatch: number;
  private readonly maxDelayMs: number;
  /** Set when the store refused a batch: this attempt is stale and its work is moot. */
  stale = false;

  constructor(
    private readonly store: Store,
    private readonly log: ResponseLog,
    private readonly jobId: JobId,
    private readonly attempt: number,
    private readonly opts: RecordBatcherOptions = {},
  ) {
    this.maxBatch = opts.maxBatch ?? 64;
    this.maxDelayMs = opts.maxDelayMs ?? 100;
  }

  record(record: ResponseRecord): void {
    this.buffer.push(record);
    if (this.buffer.length >= this.maxBatch) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.maxDelayMs);
  }

  /** Lands whatever is buffered now. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    const landed = this.store.appendRecords(this.jobId, this.attempt, batch);
    if (landed.length === 0 && batch.length > 0 && this.store.getJob(this.jobId)?.attempt !== this.attempt) {
      this.stale = true;
    }
    this.log.append(landed);
    if (landed.length > 0) this.opts.onLanded?.(landed);
  }

  /** Hands back what is still buffered, without writing it (the outcome's transaction lands it). */
  drain(): ResponseRecord[] {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const rest = this.buffer;
    this.buffer = [];
    return rest;
  }
}
