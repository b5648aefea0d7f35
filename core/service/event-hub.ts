/**
 * The event hub: the scheduler marks what changed, at any rate; the hub publishes at most one
 * event per run every `intervalMs` (default 100 ms, so ~10 a second per run, whatever the record
 * rate), reading fresh snapshots at publish time. Nothing is read while no one listens.
 * Runs on: Node (core).
 */
import type { Job, JobId, RunId } from '../domain.js';
import type { EngineEvents } from '../scheduler/engine-events.js';
import type { WorkerInfo } from '../workers/worker-handle.js';
import type { ControlEvent, ModelCost, RunSummary, ScoringStatus } from './contract.js';

export interface EventSnapshots {
  run(runId: RunId): RunSummary | null;
  job(jobId: JobId): Job | null;
  usage(runId: RunId): ModelCost[];
  workers(): WorkerInfo[];
  scoring(runId: RunId): ScoringStatus;
}

export type EventListener = (event: ControlEvent) => void;

export class EventHub implements EngineEvents {
  private readonly listeners = new Set<EventListener>();
  private readonly dirtyRuns = new Map<RunId, Set<JobId>>();
  private workersDirty = false;
  private readonly scoringDirty = new Set<RunId>();
  private timer: NodeJS.Timeout | null = null;
  private lastFlush = 0;

  constructor(
    private readonly snapshots: EventSnapshots,
    private readonly intervalMs = 100,
  ) {}

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  runChanged(runId: RunId): void {
    if (this.listeners.size === 0) return;
    if (!this.dirtyRuns.has(runId)) this.dirtyRuns.set(runId, new Set());
    this.schedule();
  }

  jobChanged(runId: RunId, jobId: JobId): void {
    if (this.listeners.size === 0) return;
    let jobs = this.dirtyRuns.get(runId);
    if (!jobs) {
      jobs = new Set();
      this.dirtyRuns.set(runId, jobs);
    }
    jobs.add(jobId);
    this.schedule();
  }

  /** A run's scores moved (a page committed, scorers attached): one `scoring` event per flush. */
  scoringChanged(runId: RunId): void {
    if (this.listeners.size === 0) return;
    this.scoringDirty.add(runId);
    this.schedule();
  }

  workersChanged(): void {
    if (this.listeners.size === 0) return;
    this.workersDirty = true;
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = Math.max(0, this.lastFlush + this.intervalMs - Date.now());
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref();
  }

  /** Publishes everything marked since the last flush. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.lastFlush = Date.now();
    const runs = [...this.dirtyRuns];
    this.dirtyRuns.clear();
    const events: ControlEvent[] = [];
    for (const [runId, jobIds] of runs) {
      const run = this.snapshots.run(runId);
      if (!run) continue;
      const jobs: Job[] = [];
      for (const id of jobIds) {
        const job = this.snapshots.job(id);
        if (job) jobs.push(job);
      }
      events.push({ type: 'run', run, jobs, usage: this.snapshots.usage(runId) });
    }
    for (const runId of this.scoringDirty) events.push({ type: 'scoring', status: this.snapshots.scoring(runId) });
    this.scoringDirty.clear();
    if (this.workersDirty) {
      this.workersDirty = false;
      events.push({ type: 'workers', workers: this.snapshots.workers() });
    }
    for (const event of events) {
      for (const listener of this.listeners) {
        try {
          listener(event);
        } catch {
          // One broken subscriber must not starve the others.
        }
      }
    }
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.listeners.clear();
  }
}
