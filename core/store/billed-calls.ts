/**
 * The billed calls' ledger, in SQL: every judge call, every retry of a hard fail and every call of
 * the sweep to a provider that bills is counted in the run's usage (judge_usage, retry_usage,
 * sweep_usage) the moment it is asked, before the request leaves, and (but the sweep's, whose
 * records keep them) gets its tokens when its answer comes. A kill -9 at any point so leaves every call that
 * reached a provider counted, whether or not its scores were stored: the page scored again after
 * a restart asks again, and pays again, and both calls are in the usage. A call that ends in an
 * error is taken back out (a provider bills no error; the router's metrics keep every attempt).
 * Each write is its own small commit without an fsync: it survives the process being killed, as
 * the sweep's records do (see RecordLander); only an OS crash could undo the last second of them.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import type { BilledTries, RunId, Usage } from '../domain.js';
import { diskFullError, isDiskFull } from './disk-full.js';
import type { Store } from './store.js';

/**
 * Whose call it is: a judge's (apart from the sweep, per judge model), a retry's (the candidate
 * model's) or the sweep's own (the records keep its tokens too; the ledger holds the calls asked).
 */
export type BilledCallKind = 'judge' | 'retry' | 'sweep';

/** One call being accounted: the run and scorer version it serves (none for the sweep's: 0), and the model asked. */
export interface BilledCall {
  runId: RunId;
  scorerId: number;
  kind: BilledCallKind;
  model: string;
}

/** What the answer says of a call: its tokens, and whether the prompt cache gave it (unbilled, counted apart). */
export interface BilledAnswer {
  usage: Pick<Usage, 'inputTokens' | 'outputTokens'>;
  cached: boolean;
}

/**
 * How a counted call ended: answered (its tokens, and tries billed empty before the answer); failed
 * with an error no provider billed (taken back out); failed after tries billed without an answer
 * (the counted call stands for one of them); or cut off half-way (it stays counted: its request
 * may have reached the provider).
 */
export type CallEnd =
  | { outcome: 'answered'; answer: BilledAnswer; billedBefore?: BilledTries | undefined }
  | { outcome: 'failed' }
  | { outcome: 'billed'; tries: BilledTries }
  | { outcome: 'aborted' };

/**
 * The scorer id a staged template's judge loop bills its calls under: the loop is no scorer version
 * of the run (its scorers live in the template), and no scorer version has id 0 (ids start at 1),
 * so its rows sit beside the scorers' in judge_usage and count in the same judge totals.
 */
export const TEMPLATE_JUDGE_SCORER_ID = 0;

export class BilledCalls {
  private readonly db: Database.Database;
  private readonly stmt: ReturnType<BilledCalls['prepare']>;

  constructor(private readonly store: Store) {
    this.db = store.db;
    this.stmt = this.prepare();
  }

  private prepare() {
    const db = this.db;
    return {
      judgeAsked: db.prepare(
        `INSERT INTO judge_usage (run_id, scorer_id, judge, calls, input_tokens, output_tokens, cached_calls, cached_input_tokens, cached_output_tokens)
         VALUES (@runId, @scorerId, @model, 1, 0, 0, 0, 0, 0)
         ON CONFLICT (run_id, scorer_id, judge) DO UPDATE SET calls = calls + 1`,
      ),
      judgeAnswered: db.prepare(
        `UPDATE judge_usage SET input_tokens = input_tokens + @input, output_tokens = output_tokens + @output,
           cached_calls = cached_calls + @cachedCalls, cached_input_tokens = cached_input_tokens + @cachedInput,
           cached_output_tokens = cached_output_tokens + @cachedOutput
         WHERE run_id = @runId AND scorer_id = @scorerId AND judge = @model`,
      ),
      judgeFailed: db.prepare(`UPDATE judge_usage SET calls = calls - 1 WHERE run_id = @runId AND scorer_id = @scorerId AND judge = @model`),
      retryAsked: db.prepare(
        `INSERT INTO retry_usage (run_id, scorer_id, model, calls, input_tokens, output_tokens)
         VALUES (@runId, @scorerId, @model, 1, 0, 0)
         ON CONFLICT (run_id, scorer_id, model) DO UPDATE SET calls = calls + 1`,
      ),
      // Retries never use the prompt cache: a cached answer would be the one that failed.
      retryAnswered: db.prepare(
        `UPDATE retry_usage SET input_tokens = input_tokens + @input, output_tokens = output_tokens + @output
         WHERE run_id = @runId AND scorer_id = @scorerId AND model = @model`,
      ),
      retryFailed: db.prepare(`UPDATE retry_usage SET calls = calls - 1 WHERE run_id = @runId AND scorer_id = @scorerId AND model = @model`),
      sweepAsked: db.prepare(
        `INSERT INTO sweep_usage (run_id, model, calls) VALUES (@runId, @model, 1)
         ON CONFLICT (run_id, model) DO UPDATE SET calls = calls + 1`,
      ),
      sweepFailed: db.prepare(`UPDATE sweep_usage SET calls = calls - 1 WHERE run_id = @runId AND model = @model`),
      judgeBilled: db.prepare(
        `UPDATE judge_usage SET calls = calls + @calls, input_tokens = input_tokens + @input, output_tokens = output_tokens + @output
         WHERE run_id = @runId AND scorer_id = @scorerId AND judge = @model`,
      ),
      retryBilled: db.prepare(
        `UPDATE retry_usage SET calls = calls + @calls, input_tokens = input_tokens + @input, output_tokens = output_tokens + @output
         WHERE run_id = @runId AND scorer_id = @scorerId AND model = @model`,
      ),
      sweepBilled: db.prepare(`UPDATE sweep_usage SET calls = calls + @calls WHERE run_id = @runId AND model = @model`),
    };
  }

  /** Counts a call about to be made. Throws (a full disk) before anything is asked: no call is made that cannot be counted. */
  asked(call: BilledCall): void {
    const key = { runId: call.runId, scorerId: call.scorerId, model: call.model };
    if (call.kind === 'sweep') this.store.withoutSync(() => this.stmt.sweepAsked.run({ runId: call.runId, model: call.model }));
    else this.store.withoutSync(() => (call.kind === 'judge' ? this.stmt.judgeAsked : this.stmt.retryAsked).run(key));
  }

  /** Adds the tokens of a call counted when it was asked. */
  answered(call: BilledCall, answer: BilledAnswer): void {
    const key = { runId: call.runId, scorerId: call.scorerId, model: call.model };
    const { inputTokens, outputTokens } = answer.usage;
    if (call.kind === 'retry') {
      this.store.withoutSync(() => this.stmt.retryAnswered.run({ ...key, input: inputTokens, output: outputTokens }));
      return;
    }
    // The sweep's tokens, and what the cache answered, are its records': its ledger counts calls only.
    if (call.kind === 'sweep') return;
    const billed = answer.cached ? { input: 0, output: 0, cachedCalls: 1, cachedInput: inputTokens, cachedOutput: outputTokens } : { input: inputTokens, output: outputTokens, cachedCalls: 0, cachedInput: 0, cachedOutput: 0 };
    this.store.withoutSync(() => this.stmt.judgeAnswered.run({ ...key, ...billed }));
  }

  /**
   * Adds host tries a provider billed without an answer (empty ones) to a call counted when it was
   * asked: `tries.calls` more calls and their tokens (the sweep's ledger keeps calls only).
   */
  billedTries(call: BilledCall, tries: BilledTries): void {
    if (tries.calls === 0 && tries.inputTokens + tries.outputTokens === 0) return;
    const row = { runId: call.runId, scorerId: call.scorerId, model: call.model, calls: tries.calls, input: tries.inputTokens, output: tries.outputTokens };
    const stmt = call.kind === 'judge' ? this.stmt.judgeBilled : call.kind === 'retry' ? this.stmt.retryBilled : this.stmt.sweepBilled;
    this.store.withoutSync(() => (call.kind === 'sweep' ? stmt.run({ runId: row.runId, model: row.model, calls: row.calls }) : stmt.run(row)));
  }

  /** Writes how a call counted when it was asked ended (see CallEnd). */
  ended(call: BilledCall, end: CallEnd): void {
    switch (end.outcome) {
      case 'answered':
        this.answered(call, end.answer);
        if (end.billedBefore) this.billedTries(call, end.billedBefore);
        return;
      case 'billed':
        this.billedTries(call, { ...end.tries, calls: end.tries.calls - 1 });
        return;
      case 'failed':
        this.failed(call);
        return;
      case 'aborted':
        return;
    }
  }

  /** Takes back a call counted when it was asked that ended in an error: nothing was billed. */
  failed(call: BilledCall): void {
    const key = { runId: call.runId, scorerId: call.scorerId, model: call.model };
    if (call.kind === 'sweep') this.store.withoutSync(() => this.stmt.sweepFailed.run({ runId: call.runId, model: call.model }));
    else this.store.withoutSync(() => (call.kind === 'judge' ? this.stmt.judgeFailed : this.stmt.retryFailed).run(key));
  }
}

/** A run's sweep calls to one model as the ledger counted them: asked, prompt-cache answers included. */
export interface SweepUsage {
  model: string;
  calls: number;
}

/** The sweep's calls per model, as counted before they left: of one run, or summed over every run. A read, for read-only stores too. */
export function sweepUsage(store: Store, runId?: RunId): SweepUsage[] {
  const columns = `model, SUM(calls) AS calls`;
  return runId === undefined
    ? store.db.prepare<[], SweepUsage>(`SELECT ${columns} FROM sweep_usage GROUP BY model ORDER BY model`).all()
    : store.db.prepare<[string], SweepUsage>(`SELECT ${columns} FROM sweep_usage WHERE run_id = ? GROUP BY model ORDER BY model`).all(runId);
}

/**
 * Ledger writes gathered into one commit per event-loop turn, as the sweep makes them: the calls
 * asked in one turn (up to the call concurrency, on a fast provider) wait for the same commit, so
 * counting costs a commit per turn, not per call, and a call still leaves only once it is counted.
 * A full disk refuses every call of that commit before any is made, in one sentence naming the
 * database (`doing` says what was being counted).
 */
export function writePerTurnOrRefuse(store: Store, doing: string): (commit: () => void) => Promise<boolean> {
  let queued: { commit: () => void; settle: (err: Error | null) => void }[] = [];
  const flush = () => {
    const batch = queued;
    queued = [];
    let failure: Error | null = null;
    try {
      store.withoutSync(() => store.db.transaction(() => batch.forEach((w) => w.commit()))());
    } catch (err) {
      failure = isDiskFull(err) ? diskFullError(store.path, doing, err) : (err as Error);
    }
    for (const w of batch) w.settle(failure);
  };
  return (commit) =>
    new Promise<boolean>((resolve, reject) => {
      if (queued.length === 0) setImmediate(flush);
      queued.push({ commit, settle: (err) => (err ? reject(err) : resolve(true)) });
    });
}

/**
 * A ledger write made at once, as the sweep and a template's judge loop make them: a full disk
 * fails the call before it is made, in one sentence naming the database (`doing` says what was
 * being counted), so no call is made that cannot be counted.
 */
export function writeNowOrRefuse(store: Store, doing: string): (commit: () => void) => Promise<boolean> {
  return (commit) => {
    try {
      commit();
      return Promise.resolve(true);
    } catch (err) {
      if (isDiskFull(err)) return Promise.reject(diskFullError(store.path, doing, err));
      return Promise.reject(err as Error);
    }
  };
}
