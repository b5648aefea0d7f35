/**
 * Runs that another process writes (a `panoptes run` on the same data folder, a second app, a
 * `panoptes score`) show up live like our own. The store keeps a change sequence: triggers write,
 * in the transaction of each change, which run, job or run's scoring moved and a number higher than
 * any before. While anyone listens, SQLite's `data_version` is polled (it changes only when another
 * connection commits, and reading it costs microseconds); on a change the rows past the last number
 * seen are read, and each is marked on the event hub, which publishes them as it does our own.
 * Our own changes are read back too when another process also committed: marking them twice is
 * harmless, since the hub coalesces and reads fresh snapshots.
 * Runs on: Node (core).
 */
import type { Store } from '../store/store.js';
import type { EventHub } from './event-hub.js';

/** How often the version is read while someone listens. */
export const FOREIGN_POLL_MS = 250;
/** Changes read per poll: a burst larger than this is read over the next polls. */
const CHANGES_PER_POLL = 2000;

export class ForeignWriteWatcher {
  private timer: NodeJS.Timeout | null = null;
  private version: number;
  private seq: number;
  /** More changes wait than the last poll read: read on even if the version holds still. */
  private behind = false;

  constructor(
    private readonly store: Store,
    private readonly events: EventHub,
    private readonly pollMs = FOREIGN_POLL_MS,
  ) {
    this.version = store.dataVersion();
    this.seq = store.queries.lastChange();
  }

  /** Starts polling (again); what changed while it was stopped is reported at the first poll. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.poll(), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Reads the version and, when another process committed, marks what changed since the last poll. */
  poll(): void {
    if (this.events.listenerCount === 0) return;
    let changes;
    try {
      const version = this.store.dataVersion();
      if (version === this.version && !this.behind) return;
      this.version = version;
      changes = this.store.queries.changesSince(this.seq, CHANGES_PER_POLL);
    } catch {
      return; // the store is closing
    }
    this.behind = changes.length === CHANGES_PER_POLL;
    for (const change of changes) {
      this.seq = change.seq;
      if (change.kind === 'run') this.events.runChanged(change.runId);
      else if (change.kind === 'job') this.events.jobChanged(change.runId, change.jobId);
      else this.events.scoringChanged(change.runId);
    }
  }
}
