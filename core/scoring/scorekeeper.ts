/**
 * The Scorekeeper: scores records as they land and re-scores stored runs, durably. For every
 * (run, scorer version) whose cursor is behind the run's records it takes the lease, reads a page
 * of records past the cursor, scores them, and commits the scores with the cursor in one
 * transaction; a kill -9 between pages loses nothing and a restart goes on from the cursor, so
 * every (record, scorer version, judge) is scored exactly once. No model is called for the sweep:
 * judges call models, and a scorer with `retryOnHardFail` has a hard fail posed again
 * (hard-fail-retry.ts); the attempts commit with the page, so they too land exactly once. A
 * pairwise judge against a model of the run gets that model's answer beside each record, read
 * once per page; a record whose baseline may still answer holds the cursor before it until it has.
 * Runs on: Node (core).
 */
import { setMaxListeners } from 'node:events';
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { PanoptesError, TERMINAL_RUN_STATUSES, toPanoptesError, type RunId } from '../domain.js';
import type { ModelClient } from '../models/model-client.js';
import type { AttemptStore, NewAttempt } from '../store/attempt-store.js';
import { BilledCalls, type BilledCallKind } from '../store/billed-calls.js';
import type { RecordBaseline } from '../store/baseline-reads.js';
import { diskFullError, isDiskFull, isStoppedByDisk } from '../store/disk-full.js';
import type { NewScore, RecordToScore, RunScorer, ScoreStore } from '../store/score-store.js';
import { processOwnerId } from '../store/owner-liveness.js';
import type { Store } from '../store/store.js';
import { billedClient } from './billed-client.js';
import { HardFailRetrier, isHardFail, type RetryRun } from './hard-fail-retry.js';
import { ScorerStopped, UnscorableRecord, type RunCallPolicy, type Scorer, type ScoreInput, type ScoreValue } from './scorer.js';
import type { ScorerAdmission } from './scorer-admission.js';
import { backoffDelay, pause } from '../concurrency/backoff.js';

export interface ScorekeeperOptions {
  store: Store;
  scores: ScoreStore;
  /** Builds the stored scorer versions, once each, as they were admitted. */
  admission: ScorerAdmission;
  logger: Logger;
  /** Where a scorer's retries of hard fails are posed (the engine's router) and stored. */
  retries: { client: ModelClient; attempts: AttemptStore };
  /** Called after each committed page (the event hub throttles what it publishes). */
  onProgress?: (runId: RunId) => void;
  /** Records per committed page (default 1000). */
  pageSize?: number;
  /** Scores in flight at once within a page: judges wait on models (default 16). */
  concurrency?: number;
  /** Lease on a (run, scorer), renewed with every page (default 30 s). */
  leaseMs?: number;
  /** How often a started worker looks for work (default 250 ms). */
  tickMs?: number;
  /** Tries per record before it is stored as failed to score (default 3). */
  tries?: number;
  /** First wait between tries (default 200 ms; doubles). */
  backoffMs?: number;
  /** How long a page waits for room on a full disk, retrying its commit, before scoring stops with the reason (default 60 s). */
  diskFullPatienceMs?: number;
}

/** A record as the worker scores it: for a pairwise judge over a model of the run, with that model's answer beside it. */
type PairedRecord = RecordToScore & { baseline?: RecordBaseline };

export class Scorekeeper {
  readonly owner = processOwnerId();
  /** Scorer versions this process cannot build (logged once; left to a process that can). */
  private readonly unbuildable = new Set<number>();
  /** Retries on a hard fail each built scorer version asks for (absent: none). */
  private readonly retryLimits = new Map<number, number>();
  private readonly retrier: HardFailRetrier;
  /** Where every judge call and retry is counted before it is made. */
  private readonly ledger: BilledCalls;
  private readonly attempts: AttemptStore;
  private readonly pageSize: number;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly tickMs: number;
  private readonly tries: number;
  private readonly backoffMs: number;
  private readonly diskFullPatienceMs: number;
  /** Why scoring stopped in this process (a disk that stayed full): `finish` reports it, and nothing more is scored. */
  private halted: Error | undefined;
  /** A write is waiting for room on a full disk (the warning is logged once). */
  private waitingForRoom = false;
  private timer: NodeJS.Timeout | null = null;
  private pumping: Promise<void> | null = null;
  private again = false;
  private readonly abort = new AbortController();

  constructor(private readonly opts: ScorekeeperOptions) {
    this.pageSize = opts.pageSize ?? 1000;
    this.concurrency = opts.concurrency ?? 16;
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.tickMs = opts.tickMs ?? 250;
    this.tries = opts.tries ?? 3;
    this.backoffMs = opts.backoffMs ?? 200;
    this.diskFullPatienceMs = opts.diskFullPatienceMs ?? 60_000;
    // Every judge call and retry in flight (up to `concurrency` at once) listens on the worker's signal.
    setMaxListeners(0, this.abort.signal);
    this.ledger = new BilledCalls(opts.store);
    const retryClients = new Map<number, ModelClient>();
    const retryClient = (scorerId: number) => {
      if (!retryClients.has(scorerId)) retryClients.set(scorerId, this.billed(opts.retries.client, scorerId, 'retry'));
      return retryClients.get(scorerId)!;
    };
    this.retrier = new HardFailRetrier(retryClient, opts.retries.attempts);
    this.attempts = opts.retries.attempts;
  }

  /** Looks for work every tick until stopped: scoring as records land, and work left by a crash. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.wake(), this.tickMs);
    this.timer.unref();
    void this.wake();
  }

  /** Scores what is behind now (coalesced with a pass already under way). */
  wake(): Promise<void> {
    if (this.abort.signal.aborted || this.halted) return Promise.resolve();
    if (this.pumping) {
      this.again = true;
      return this.pumping;
    }
    this.pumping = (async () => {
      try {
        do {
          this.again = false;
          await this.pass();
        } while (this.again && !this.abort.signal.aborted);
      } catch (err) {
        if (err instanceof PanoptesError && err.code === 'disk_full') {
          this.halted = err;
          this.opts.logger.error({ reason: err.message }, 'scoring stopped');
        } else this.opts.logger.error({ err }, 'scoring pass failed');
      } finally {
        this.pumping = null;
      }
    })();
    return this.pumping;
  }

  /**
   * Scores until the run has ended and every scorer attached to it that this process can build has
   * caught up with its records; while another process holds a scorer's lease, waits for it (or for
   * the lease to lapse).
   */
  async finish(runId: RunId): Promise<void> {
    while (!this.abort.signal.aborted) {
      await this.wake();
      if (this.halted) throw this.halted;
      const run = this.opts.store.queries.getRun(runId);
      const ended = !run || TERMINAL_RUN_STATUSES.includes(run.status);
      if (ended && this.caughtUp(runId)) return;
      await sleep(Math.min(this.tickMs, 100));
    }
  }

  /** Scores until every scorer of the run this process can build has reached the records landed so far (a run posed until decided, between batches). */
  async scoreLanded(runId: RunId, signal: AbortSignal): Promise<void> {
    while (!this.abort.signal.aborted && !signal.aborted) {
      await this.wake();
      if (this.halted) throw this.halted;
      if (this.caughtUp(runId)) return;
      await pause(Math.min(this.tickMs, 20), signal);
    }
  }

  /** Every scorer of the run has scored through its last record, but one this process cannot build (url_health without --allow-network: left to one that can) or a stopped one (it scores nothing more). */
  private caughtUp(runId: RunId): boolean {
    const last = this.opts.scores.lastSeq(runId);
    return this.opts.scores.runScorers(runId).every((s) => s.scoredSeq >= last || s.stopped !== null || this.unbuildable.has(s.scorerId));
  }

  /** Runs with a scorer that has not reached their last record: work a crash left, or scoring under way. */
  behindRuns(): RunId[] {
    return [...new Set(this.opts.scores.behind().map((s) => s.runId))];
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.abort.abort();
    await this.pumping;
    await this.opts.admission.close();
  }

  private async pass(): Promise<void> {
    for (const rs of this.opts.scores.behind()) {
      if (this.abort.signal.aborted) return;
      const scorer = this.scorerOf(rs);
      if (!scorer) continue;
      if (!(await this.patiently(this.abort.signal, () => this.opts.scores.claim(rs.runId, rs.scorerId, this.owner, this.leaseMs)))) continue;
      const lease = this.holdLease(rs);
      try {
        await this.catchUp(rs, scorer, lease.signal);
      } catch (err) {
        if (!(err instanceof ScorerStopped)) throw err;
        // The page is not committed: its records stay pending, with the reason beside the scorer.
        this.opts.scores.stopScorer(rs.scorerId, err.message);
        this.opts.logger.error({ run_id: rs.runId, scorer: rs.name, version: rs.version, reason: err.message }, 'scorer stopped');
      } finally {
        lease.stop();
        this.release(rs);
      }
    }
  }

  /** Gives the lease back; on a full disk it cannot be written, and it lapses by itself. */
  private release(rs: RunScorer): void {
    try {
      this.opts.scores.release(rs.runId, rs.scorerId, this.owner);
    } catch (err) {
      if (!isDiskFull(err)) throw err;
    }
  }

  /**
   * Keeps the lease on a (run, scorer) while its pages are scored: renewed every third of its
   * length, so a page that takes longer than the lease (a slow judge) is not taken over half-way
   * and scored twice. The signal aborts when the worker stops or the lease was lost all the same
   * (a process stalled past it): the page's calls stop, since its scores could not be stored.
   */
  private holdLease(rs: RunScorer): { signal: AbortSignal; stop: () => void } {
    const lost = new AbortController();
    const timer = setInterval(() => {
      let held = false;
      try {
        held = this.opts.scores.renew(rs.runId, rs.scorerId, this.owner, this.leaseMs);
      } catch (err) {
        // On a full disk the lease cannot be written, and the commit's patience decides.
        held = isDiskFull(err);
        if (!held) this.opts.logger.warn({ err, run_id: rs.runId, scorer: rs.name }, 'scoring lease could not be renewed');
      }
      if (!held) lost.abort();
    }, Math.max(20, Math.floor(this.leaseMs / 3)));
    timer.unref();
    const signal = AbortSignal.any([this.abort.signal, lost.signal]);
    setMaxListeners(0, signal);
    return { signal, stop: () => clearInterval(timer) };
  }

  /** Scores the run's records past the cursor, page by page, up to the last one landed now. */
  private async catchUp(rs: RunScorer, scorer: Scorer, signal: AbortSignal): Promise<void> {
    const current = this.opts.scores.runScorer(rs.runId, rs.scorerId);
    if (!current) return;
    const run = this.opts.store.queries.getRun(rs.runId);
    if (!run) return;
    const calls: RunCallPolicy = { privacy: run.options.privacy, skipPromptCache: run.options.skipPromptCache };
    const retryRun: RetryRun = { runId: run.id, sampling: run.options.sampling, privacy: run.options.privacy };
    let cursor = current.scoredSeq;
    const through = this.opts.scores.lastSeq(rs.runId);
    // A record may bring up to N retries into the page's commit: fewer records a page keep that
    // commit (scores and attempts, one transaction) no larger than a page without retries.
    const pageSize = Math.max(1, Math.floor(this.pageSize / (1 + (this.retryLimits.get(rs.scorerId) ?? 0))));
    while (cursor < through && !signal.aborted) {
      const read = this.opts.scores.recordsToScore(rs.runId, cursor, through, pageSize);
      if (read.length === 0) break;
      // Reading, scoring and committing a page each take milliseconds: other work runs between them.
      await yieldToLoop();
      const records = scorer.baseline === undefined ? read : await this.withBaselines(rs.runId, scorer.baseline, cursor, through, read);
      // The first record's baseline has not answered yet: the cursor stays before it until it has.
      if (records.length === 0) return;
      const last = records[records.length - 1]!.seq;
      const scored = this.opts.scores.scoredIn(rs.scorerId, cursor, last);
      const page = await this.scorePage(rs, scorer, calls, retryRun, scored.size === 0 ? records : records.filter((r) => !scored.has(r.seq)), signal);
      if (signal.aborted) return;
      await yieldToLoop();
      const committed = await this.patiently(signal, () =>
        this.opts.scores.commitScores(rs.runId, rs.scorerId, this.owner, {
          scores: page.scores,
          throughSeq: last,
          done: page.done,
          failed: page.failed,
          ...(page.lastError === undefined ? {} : { lastError: page.lastError }),
          leaseMs: this.leaseMs,
          ...(page.attempts.length === 0 ? {} : { alongside: () => this.storeAttempts(rs, page.attempts), alongsideVerdicts: page.attempts.flatMap((a) => a.scores) }),
        }),
      );
      if (!committed) return; // the lease was taken over: the new owner goes on from the cursor
      cursor = last;
      this.opts.onProgress?.(rs.runId);
      if (records.length < read.length) return; // the rest of the page waits for its baseline's answers
      // Let the sweep, the UI and the transports have the event loop between pages.
      await yieldToLoop();
    }
  }

  /**
   * A page's commit on a disk that may be full: tried again with a growing wait, the page's scores
   * kept in hand, so no model is called for work that cannot be stored; past the patience, the
   * disk-full error stops scoring in this process (false: the worker stopped meanwhile).
   */
  private async patiently(signal: AbortSignal, commit: () => boolean): Promise<boolean> {
    const giveUpAt = Date.now() + this.diskFullPatienceMs;
    for (let failures = 1; ; failures++) {
      try {
        const done = commit();
        this.waitingForRoom = false;
        return done;
      } catch (err) {
        if (!isDiskFull(err)) throw err;
        const wait = backoffDelay({ baseMs: 100, maxMs: 5000 }, failures);
        if (Date.now() + wait > giveUpAt) {
          throw diskFullError(this.opts.store.path, `scoring stopped after ${Math.round(this.diskFullPatienceMs / 1000)} s of waiting for room to store its scores`, err);
        }
        // Said once while the disk stays full, not by every call and page that waits.
        if (failures === 1 && !this.waitingForRoom) this.opts.logger.warn({ path: this.opts.store.path }, 'the disk is full: scoring waits for room');
        this.waitingForRoom = true;
        await pause(wait, signal);
        if (signal.aborted) return false;
      }
    }
  }

  /**
   * The page's records with the baseline model's answer beside each (one query for the page), up
   * to the first whose baseline may still answer: that one and the records after it wait for a
   * later tick, so none is scored without its baseline or skipped.
   */
  private async withBaselines(runId: RunId, baseline: string, afterSeq: number, throughSeq: number, records: readonly RecordToScore[]): Promise<PairedRecord[]> {
    const bySeq = new Map(this.opts.scores.baselines.of(runId, baseline, afterSeq, throughSeq, records.length).map((b) => [b.seq, b]));
    const paired: PairedRecord[] = [];
    for (const r of records) {
      const b = bySeq.get(r.seq);
      if (b === undefined || b.state === 'waiting') break;
      paired.push({ ...r, baseline: b });
    }
    await yieldToLoop();
    return paired;
  }

  private async scorePage(rs: RunScorer, scorer: Scorer, calls: RunCallPolicy, retryRun: RetryRun, records: readonly PairedRecord[], signal: AbortSignal) {
    const results: NewScore[][] = new Array<NewScore[]>(records.length);
    const attempts: NewAttempt[] = [];
    let failed = 0;
    let lastError: string | undefined;
    let next = 0;
    const lane = async () => {
      while (next < records.length && !signal.aborted) {
        const i = next++;
        const r = records[i]!;
        const outcome = await this.scoreOne(rs, scorer, calls, r, signal);
        if (outcome.failed) {
          failed += 1;
          lastError = outcome.error;
        }
        const limit = this.retryLimits.get(rs.scorerId) ?? 0;
        if (outcome.values && limit > 0 && isHardFail(outcome.values)) {
          const input = this.inputOf(rs, calls, r);
          const retried = await this.retrier.retry(
            retryRun,
            { rs, record: r, input, first: outcome.scores, limit, score: (i) => this.scoreTried(scorer, i, signal), toScore: (v) => toNewScore(r.seq, scorer, v) },
            signal,
          );
          attempts.push(...retried.attempts);
        }
        results[i] = outcome.scores;
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, records.length) }, lane));
    return { scores: results.flat(), done: records.length - failed, failed, attempts, ...(lastError === undefined ? {} : { lastError }) };
  }

  private inputOf(rs: RunScorer, calls: RunCallPolicy, r: PairedRecord): ScoreInput {
    const input: ScoreInput = { runId: rs.runId, model: r.model, epoch: r.epoch, vignette: r.vignette, response: r.response, calls };
    if (r.baseline?.state === 'answered') input.baseline = { response: r.baseline.response };
    return input;
  }

  private async scoreOne(
    rs: RunScorer,
    scorer: Scorer,
    calls: RunCallPolicy,
    r: PairedRecord,
    signal: AbortSignal,
  ): Promise<{ scores: NewScore[]; failed: boolean; values?: ScoreValue[]; error?: string }> {
    // A baseline that will never answer makes the record unscorable without asking the scorer.
    const scored = r.baseline?.state === 'missing' ? { error: r.baseline.why } : await this.scoreTried(scorer, this.inputOf(rs, calls, r), signal);
    if (Array.isArray(scored)) return { scores: scored.map((v) => toNewScore(r.seq, scorer, v)), failed: false, values: scored };
    // A page cut short (scoring stopped, the lease lost) is not committed: its records are not failures.
    if (!signal.aborted) this.opts.logger.warn({ run_id: rs.runId, scorer: rs.name, seq: r.seq, err: scored.error }, 'record could not be scored');
    return {
      scores: [{ seq: r.seq, judge: 0, value: 0, passed: null, severity: 'none', explanation: `could not score: ${scored.error}`, failed: true }],
      failed: true,
      error: scored.error,
    };
  }

  /** Scores one answer, trying again after a failure worth retrying: its verdicts, or the last error. */
  private async scoreTried(scorer: Scorer, input: ScoreInput, signal: AbortSignal): Promise<ScoreValue[] | { error: string }> {
    let lastError = '';
    for (let t = 1; t <= this.tries; t++) {
      try {
        return await scorer.score(input, signal);
      } catch (err) {
        if (err instanceof ScorerStopped || isStoppedByDisk(err)) throw err;
        lastError = err instanceof UnscorableRecord ? err.message : toPanoptesError(err).message;
        if (err instanceof UnscorableRecord || signal.aborted || t === this.tries) break;
        await pause(backoffDelay({ baseMs: this.backoffMs, maxMs: 30_000 }, t), signal);
      }
    }
    return { error: lastError };
  }

  /** A page's retries, in its transaction: the attempts and their verdicts (their calls were counted when made). */
  private storeAttempts(rs: RunScorer, attempts: readonly NewAttempt[]): void {
    this.attempts.write(rs.scorerId, attempts);
  }

  /**
   * The client a scorer version's calls go through: each counted in the run's usage before it is
   * made, on a full disk after waiting for room as a page's commit does (no call is made that
   * cannot be counted).
   */
  private billed(client: ModelClient, scorerId: number, kind: BilledCallKind): ModelClient {
    return billedClient(client, {
      ledger: this.ledger,
      scorerId,
      kind,
      write: (write, signal) =>
        this.patiently(signal ?? this.abort.signal, () => {
          write();
          return true;
        }),
    });
  }

  /** A stored scorer version, built once per process by the admission; null (and logged once) when this process cannot build it. */
  private scorerOf(rs: RunScorer): Scorer | null {
    if (this.unbuildable.has(rs.scorerId)) return null;
    const admitted = this.opts.admission.storedScorer(rs, (client) => this.billed(client, rs.scorerId, 'judge'));
    if (admitted.error) {
      this.unbuildable.add(rs.scorerId);
      this.opts.logger.error({ err: admitted.error, scorer: rs.name, version: rs.version }, 'stored scorer cannot be built here');
      return null;
    }
    const retries = admitted.built.definition.retryOnHardFail;
    if (retries !== undefined) this.retryLimits.set(rs.scorerId, retries);
    return admitted.built.scorer;
  }
}

function toNewScore(seq: number, scorer: Scorer, v: ScoreValue): NewScore {
  const judge = v.judge === null ? 0 : Math.max(0, scorer.judges.indexOf(v.judge));
  return {
    seq,
    judge,
    value: Number.isFinite(v.value) ? Math.min(1, Math.max(0, v.value)) : 0,
    passed: v.passed,
    severity: v.severity,
    explanation: v.explanation,
    failed: false,
    ...(v.judgeCall?.unreadable === true ? { noVerdict: true } : {}),
  };
}
