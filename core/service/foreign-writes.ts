/**
 * Runs that another process writes (a `panoptes run` on the same data folder, a second app) show
 * up live like our own: while anyone listens, SQLite's `data_version` is polled (it changes only
 * when another connection commits, and reading it costs microseconds), and on a change the newest
 * runs' progress is compared with what was last seen; each run that moved, and each of its jobs that
 * moved, is marked on the event hub, which publishes them as it does our own.
 * Runs on: Node (core).
 */
import type { JobId, RunId } from '../domain.js';
import type { Store } from '../store/store.js';
import type { EventHub } from './event-hub.js';

/** How often the version is read while someone listens. */
export const FOREIGN_POLL_MS = 250;
/** How many of the newest runs are compared on a change. */
const WATCHED_RUNS = 200;

export class ForeignWriteWatcher {
  private timer: NodeJS.Timeout | null = null;
  private version: number;
  private readonly runs = new Map<RunId, string>();
  private readonly jobs = new Map<RunId, Map<JobId, string>>();

  constructor(
    private readonly store: Store,
    private readonly events: EventHub,
    private readonly pollMs = FOREIGN_POLL_MS,
  ) {
    this.version = store.dataVersion();
    this.remember();
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.poll(), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Reads the version and, when another process committed, marks what it changed. */
  poll(): void {
    if (this.events.listenerCount === 0) return;
    let version: number;
    try {
      version = this.store.dataVersion();
    } catch {
      return; // the store is closing
    }
    if (version === this.version) return;
    this.version = version;
    for (const run of this.store.queries.runProgress(WATCHED_RUNS)) {
      const print = progressPrint(run);
      if (this.runs.get(run.id) === print) continue;
      this.runs.set(run.id, print);
      this.events.runChanged(run.id);
      const known = this.jobs.get(run.id) ?? new Map<JobId, string>();
      this.jobs.set(run.id, known);
      for (const job of this.store.queries.jobProgress(run.id)) {
        const jobPrint = `${job.status}|${job.attempt}|${job.done}`;
        if (known.get(job.id) === jobPrint) continue;
        known.set(job.id, jobPrint);
        this.events.jobChanged(run.id, job.id);
      }
      // A finished run moves no more: forget its jobs.
      if (run.status !== 'queued' && run.status !== 'running') this.jobs.delete(run.id);
    }
  }

  /** What the runs look like now, so only later changes are reported. */
  private remember(): void {
    for (const run of this.store.queries.runProgress(WATCHED_RUNS)) {
      this.runs.set(run.id, progressPrint(run));
    }
  }
}

/** What tells a run's progress apart: a restart (retry, resume, takeover) changes it even when the counts do not. */
function progressPrint(run: { restarts: number; status: string; doneCount: number; failedCount: number; calls: number }): string {
  return `${run.restarts}|${run.status}|${run.doneCount}|${run.failedCount}|${run.calls}`;
}
