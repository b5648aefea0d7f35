/**
 * AdaptiveRun: the live loop of a run posed until decided. The run's vignettes are taken in the
 * order of its seed (a permutation fixed before any answer is read), a batch at a time. Each batch
 * is opened to every job of the models still in contention: each job's vignette source (`source`)
 * yields the batch's vignettes it has no record of, then waits. When every such job has answered
 * the whole batch (a record landed, or the vignette given up on), the batch's scores are read once
 * the scorer has caught up, every open pair's anytime-valid confidence sequence takes them
 * (core/scoring/adaptive-decision.ts), and the next batch opens to the models that still have an
 * open pair. A model out of contention gets no more calls: its sources end, and its jobs settle with
 * the vignettes they were posed. A model that answers none of a batch (every answer given up on, or
 * its job failed for good) leaves contention after it, so the others are not posed the whole
 * manifest for its sake; the rule reads only the batch's scores, so the replay applies it alike. The
 * run ends when every pair is decided or equivalent, the manifest is spent, or the next batch would
 * not fit the run's budget of calls (`maxCalls`).
 *
 * The decision is a function of the stored records and scores in the seeded order: `resume` replays
 * every complete batch from the store before any call is made, so a run killed and resumed opens
 * the same batch to the same models, re-poses only what never landed (the records' unique key keeps
 * each exactly once), and decides the same as one never interrupted. `panoptes decide` with the
 * run's seed and batch replays it the same way.
 * Runs on: Node (core).
 */
import type { Logger } from 'pino';
import { PanoptesError, type IndexedVignette, type Job, type JobId, type Run, type UntilDecided } from '../domain.js';
import { AdaptiveDecision, batchFits, seededOrder, type OrderRow, type PairDecision } from '../scoring/adaptive-decision.js';
import type { Store } from '../store/store.js';

/** Where the loop reads a batch's scores (the engine: the scorekeeper and the score matrix). */
export interface AdaptiveRows {
  /**
   * Waits until the run's scorer has scored every record landed so far, then gives each of these
   * vignettes' epoch-reduced score per model, in the order given; a model with an epoch not scored
   * is absent from its row.
   */
  rows(run: Run, scorer: string | undefined, indices: readonly number[], signal: AbortSignal): Promise<OrderRow[]>;
}

export interface AdaptiveRunDeps {
  run: Run & { options: { untilDecided: UntilDecided } };
  store: Store;
  rows: AdaptiveRows;
  logger: Logger;
  signal: AbortSignal;
  /** Called after each batch is decided (the run's events). */
  onBatch?: () => void;
}

/** What the loop says of itself: the batch open now, the models posed it, and every pair. */
export interface AdaptiveState {
  batch: number;
  posed: string[];
  finished: boolean;
  /** The run stopped because its next batch did not fit its budget of calls. */
  budgetSpent: boolean;
  pairs: PairDecision[];
}

export class AdaptiveRun {
  private readonly options: UntilDecided;
  private readonly order: Int32Array;
  private readonly decision: AdaptiveDecision;
  /** The batch open now: every batch before it has been fed to the decision. */
  private batch = 0;
  /** The models the open batch is posed to (those in contention when it opened). */
  private posed = new Set<string>();
  /** Per model, the vignettes posed to it so far: what each of its jobs settles with. */
  private readonly posedCount = new Map<string, number>();
  /** The run's jobs that may still answer (a failed one leaves the barrier). */
  private readonly jobs = new Map<JobId, Job>();
  private finished = false;
  private budgetSpent = false;
  private evaluating = false;
  private failure: PanoptesError | undefined;
  private waiters: (() => void)[] = [];
  private checkQueued = false;

  constructor(private readonly deps: AdaptiveRunDeps) {
    const { run } = deps;
    this.options = run.options.untilDecided;
    this.order = seededOrder(run.vignetteCount, this.options.orderSeed);
    this.decision = new AdaptiveDecision({ models: run.models, population: run.vignetteCount, alpha: this.options.alpha, margin: this.options.margin });
    for (const m of run.models) this.posedCount.set(m, 0);
  }

  /** Replays every batch the store holds whole (after a crash, a resume), then opens the next one. */
  async resume(jobs: readonly Job[]): Promise<void> {
    for (const j of jobs) {
      if (j.status !== 'failed' && j.status !== 'cancelled') this.jobs.set(j.id, j);
    }
    this.open();
    while (!this.finished && this.batchAnswered()) await this.advance();
    this.deps.logger.info({ batch: this.batch, posed: [...this.posed], finished: this.finished }, 'run posed until decided: resumed at batch');
  }

  /** The vignettes a job poses: each batch opened to its model, less what it already answered; ends when its model is out of contention. */
  async *source(job: Job): AsyncGenerator<IndexedVignette, void, undefined> {
    const { run, store, signal } = this.deps;
    for (let b = this.batch; ; b++) {
      while (!this.finished && !this.failure && !signal.aborted && (this.batch < b || this.evaluating)) await this.changed();
      if (this.failure) throw this.failure;
      if (this.finished || signal.aborted || !this.posed.has(job.model)) return;
      // A job that begins again (a retry) joins at the open batch.
      b = this.batch;
      for (const v of store.jobs.pendingAmong(run.id, job.id, this.indices(b))) yield v;
    }
  }

  /** The vignettes posed to a model so far: its jobs are settled once each has a record of them. */
  posedTo(model: string): number {
    return this.posedCount.get(model) ?? 0;
  }

  /** A job's records landed or it gave a vignette up: the open batch may be complete. */
  answered(): void {
    if (this.checkQueued) return;
    this.checkQueued = true;
    queueMicrotask(() => {
      this.checkQueued = false;
      void this.check();
    });
  }

  /** A job failed for good: it no longer holds a batch back. */
  jobFailed(jobId: JobId): void {
    this.jobs.delete(jobId);
    this.answered();
  }

  state(): AdaptiveState {
    return { batch: this.batch, posed: [...this.posed], finished: this.finished, budgetSpent: this.budgetSpent, pairs: this.decision.decisions() };
  }

  private indices(b: number): number[] {
    const size = this.options.batch;
    return Array.from(this.order.subarray(b * size, Math.min(this.order.length, (b + 1) * size)));
  }

  /** Opens the next batch to the models in contention, or finishes. */
  private open(): void {
    const contention = this.decision.inContention();
    const size = this.indices(this.batch).length;
    const posedCalls = [...this.posedCount.values()].reduce((s, n) => s + n, 0) * this.deps.run.epochs;
    const fits = batchFits(this.options.maxCalls, posedCalls, contention.length, size, this.deps.run.epochs);
    if (contention.length === 0 || this.batch * this.options.batch >= this.order.length || !fits) {
      this.budgetSpent = contention.length > 0 && size > 0 && !fits;
      this.decision.close();
      this.finished = true;
      this.posed = new Set();
      return;
    }
    this.posed = new Set(contention);
    for (const m of contention) this.posedCount.set(m, this.posedTo(m) + size);
  }

  /** Every job posed the open batch has answered all of it. */
  private batchAnswered(): boolean {
    const indices = this.indices(this.batch);
    for (const job of this.jobs.values()) {
      if (this.posed.has(job.model) && this.deps.store.jobs.answeredAmong(job.id, indices) < indices.length) return false;
    }
    return true;
  }

  /** Feeds the open batch's scores to the decision and opens the next. */
  private async advance(): Promise<void> {
    const { run, rows, signal } = this.deps;
    const batchRows = await rows.rows(run, this.options.scorer, this.indices(this.batch), signal);
    if (signal.aborted) return;
    this.decision.addBatch(batchRows);
    this.batch += 1;
    this.open();
  }

  private async check(): Promise<void> {
    if (this.evaluating || this.finished || this.failure || this.deps.signal.aborted || !this.batchAnswered()) return;
    this.evaluating = true;
    try {
      await this.advance();
      this.deps.logger.debug({ batch: this.batch, posed: [...this.posed], finished: this.finished }, 'batch decided');
      this.deps.onBatch?.();
    } catch (err) {
      if (!this.deps.signal.aborted) {
        this.failure = new PanoptesError('internal', `the decision could not take batch ${this.batch + 1}: ${err instanceof Error ? err.message : String(err)}`, { retryable: false });
      }
    } finally {
      this.evaluating = false;
      this.wake();
      // The batch just opened may be answered already (records that landed before a crash).
      if (!this.finished) this.answered();
    }
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.deps.signal.removeEventListener('abort', done);
        resolve();
      };
      this.waiters.push(done);
      this.deps.signal.addEventListener('abort', done, { once: true });
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
