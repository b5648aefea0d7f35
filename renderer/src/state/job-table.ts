/**
 * The open run's jobs as a model x epoch table, for the job grid. It is mutable on purpose: a run
 * may have 10,000 jobs and hundreds of job updates a second, and copying the whole table on every
 * update would cost more than drawing it. The store keeps one table and a version number that
 * changes whenever the table does; the grid redraws on a new version.
 * Runs on: renderer.
 */
import type { Job, JobStatus } from '../api/types.js';
import { jobIsNotOlder } from './freshness.js';

export type StatusCounts = Record<JobStatus, number>;

export function emptyCounts(): StatusCounts {
  return { pending: 0, running: 0, done: 0, failed: 0, cancelled: 0 };
}

export class JobTable {
  readonly models: readonly string[];
  readonly epochs: number;
  /** Row-major: index = modelRow * epochs + (epoch - 1). */
  readonly cells: (Job | undefined)[];
  readonly counts: StatusCounts = emptyCounts();
  /** Jobs that carry an error (failed, or waiting to be retried), by cell index. */
  readonly withError = new Set<number>();
  private readonly rowOf: Map<string, number>;

  constructor(models: readonly string[], epochs: number, jobs: readonly Job[] = []) {
    this.models = models;
    this.epochs = epochs;
    this.cells = new Array<Job | undefined>(models.length * epochs);
    this.rowOf = new Map(models.map((m, i) => [m, i]));
    for (const job of jobs) this.apply(job);
  }

  get size(): number {
    return this.cells.length;
  }

  indexOf(model: string, epoch: number): number {
    const row = this.rowOf.get(model);
    if (row === undefined || epoch < 1 || epoch > this.epochs) return -1;
    return row * this.epochs + (epoch - 1);
  }

  /** Takes a job's newer state; false when the table already holds a newer one (or the job is not of this run). */
  apply(job: Job): boolean {
    const index = this.indexOf(job.model, job.epoch);
    if (index < 0) return false;
    const current = this.cells[index];
    if (current && !jobIsNotOlder(job, current)) return false;
    if (current) this.counts[current.status] -= 1;
    this.counts[job.status] += 1;
    this.cells[index] = job;
    if (job.error) this.withError.add(index);
    else this.withError.delete(index);
    return true;
  }
}
