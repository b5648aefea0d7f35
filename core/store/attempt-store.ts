/**
 * Retries on hard fails, in SQL: the extra attempts a scorer version asked for, their verdicts, and
 * the candidate calls they cost, on the Store's own connection. Attempts are written inside the
 * transaction of the score page that asked for them (ScoreStore.commitScores' `alongside`), so a
 * kill -9 keeps all of a page's attempts or none; the primary key (scorer, record, attempt) refuses
 * a second attempt with the same number. The calls retries cost are counted as they are made, not
 * here (billed-calls.ts): a kill -9 that loses a page's attempts does not lose what they cost.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import type { ModelUsage, RunId } from '../domain.js';
import type { Severity } from '../domain.js';
import { SEVERITY_CODE, SEVERITY_NAME, type RecordScore } from './score-store.js';
import type { Store } from './store.js';

/** One verdict on an attempt: like a score, without the record (the attempt names it). */
export interface NewAttemptScore {
  judge: number;
  value: number;
  passed: boolean | null;
  severity: Severity;
  explanation: string;
}

/** One retry of a record: the model's new answer, what the call cost, and the scorer's verdicts on it. */
export interface NewAttempt {
  seq: number;
  /** 2 and on: attempt 1 is the sweep's record. */
  attempt: number;
  model: string;
  response: string;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  host: string;
  finishedAt: number;
  /** Empty when the attempt could not be scored. */
  scores: NewAttemptScore[];
}

/** One retry of a record as a reader sees it: which scorer asked for it, the answer, and that scorer's verdicts on it. */
export interface StoredAttempt {
  scorerName: string;
  version: string;
  attempt: number;
  response: string;
  /** Empty when the attempt could not be scored. */
  scores: RecordScore[];
}

interface AttemptRow {
  name: string;
  version: string;
  judges: string;
  attempt: number;
  response: string;
  judge: number | null;
  value: number | null;
  passed: number | null;
  severity: number | null;
  explanation: string | null;
}

/** A run's retry usage per (run, model), as the accounting prices it. */
export interface RunRetryUsage extends ModelUsage {
  runId: RunId;
}

// A model whose every call ended in an error (each taken back out) has a row of nothing: not shown.
export const USAGE_COLUMNS = `model, SUM(calls) AS calls, SUM(input_tokens) AS inputTokens, SUM(output_tokens) AS outputTokens,
  0 AS cachedCalls, 0 AS cachedInputTokens, 0 AS cachedOutputTokens`;

export class AttemptStore {
  private readonly db: Database.Database;
  private readonly stmt: ReturnType<AttemptStore['prepare']>;

  constructor(store: Store) {
    this.db = store.db;
    this.stmt = this.prepare();
  }

  private prepare() {
    const db = this.db;
    return {
      insertAttempt: db.prepare(
        `INSERT INTO retry_attempts (scorer_id, seq, attempt, response, input_tokens, output_tokens, latency_ms, host, finished_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scorer_id, seq, attempt) DO NOTHING`,
      ),
      insertScore: db.prepare(
        `INSERT INTO attempt_scores (scorer_id, seq, attempt, judge, value, passed, severity, explanation)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scorer_id, seq, attempt, judge) DO NOTHING`,
      ),
      // Through the run's scorers (few) and the attempts' key: a record's retries, in the order scorers were attached.
      recordAttempts: db.prepare<[{ runId: string; seq: number }], AttemptRow>(
        `SELECT scr.name, scr.version, scr.judges, a.attempt, a.response, sc.judge, sc.value, sc.passed, sc.severity, sc.explanation
         FROM run_scorers rs JOIN scorers scr ON scr.id = rs.scorer_id
           CROSS JOIN retry_attempts a ON a.scorer_id = rs.scorer_id AND a.seq = @seq
           LEFT JOIN attempt_scores sc ON sc.scorer_id = a.scorer_id AND sc.seq = a.seq AND sc.attempt = a.attempt
         WHERE rs.run_id = @runId ORDER BY rs.position, a.attempt, sc.judge`,
      ),
      retried: db.prepare<[number, number], { n: number }>(`SELECT COUNT(*) AS n FROM retry_attempts WHERE scorer_id = ? AND seq = ?`),
      usage: db.prepare<[string], ModelUsage>(`SELECT ${USAGE_COLUMNS} FROM retry_usage WHERE run_id = ? GROUP BY model HAVING SUM(calls) > 0 ORDER BY model`),
      usageByRun: db.prepare<[], RunRetryUsage>(`SELECT run_id AS runId, ${USAGE_COLUMNS} FROM retry_usage GROUP BY run_id, model HAVING SUM(calls) > 0 ORDER BY run_id, model`),
    };
  }

  /**
   * Stores a page's attempts, to be called inside the page's transaction. An attempt already there
   * (a page scored twice) is kept as it was.
   */
  write(scorerId: number, attempts: readonly NewAttempt[]): void {
    for (const a of attempts) {
      const inserted = this.stmt.insertAttempt.run(
        scorerId,
        a.seq,
        a.attempt,
        a.response,
        a.inputTokens,
        a.outputTokens,
        Math.round(a.latencyMs),
        a.host,
        a.finishedAt,
      ).changes;
      if (inserted === 0) continue;
      for (const s of a.scores) {
        this.stmt.insertScore.run(
          scorerId,
          a.seq,
          a.attempt,
          s.judge,
          s.value,
          s.passed === null ? null : s.passed ? 1 : 0,
          SEVERITY_CODE[s.severity],
          s.explanation === '' ? null : s.explanation,
        );
      }
    }
  }

  /** Whether a record already has its retries stored for this scorer version (a page re-scored after a rewind). */
  retried(scorerId: number, seq: number): boolean {
    return this.stmt.retried.get(scorerId, seq)!.n > 0;
  }

  /** Every retry of one record, by every scorer version attached to its run, with its verdicts. */
  recordAttempts(runId: RunId, seq: number): StoredAttempt[] {
    const attempts: StoredAttempt[] = [];
    for (const r of this.stmt.recordAttempts.all({ runId, seq })) {
      let last = attempts[attempts.length - 1];
      if (!last || last.version !== r.version || last.attempt !== r.attempt) {
        attempts.push((last = { scorerName: r.name, version: r.version, attempt: r.attempt, response: r.response, scores: [] }));
      }
      if (r.judge === null) continue; // no verdict: the attempt could not be scored
      last.scores.push({
        scorerName: r.name,
        version: r.version,
        judge: (JSON.parse(r.judges) as string[])[r.judge] ?? null,
        value: r.value!,
        passed: r.passed === null ? null : r.passed === 1,
        severity: SEVERITY_NAME[r.severity!] ?? 'none',
        explanation: r.explanation ?? '',
      });
    }
    return attempts;
  }

  /** The retries' calls on a run, per candidate model, over every scorer version. */
  usage(runId: RunId): ModelUsage[] {
    return this.stmt.usage.all(runId);
  }

  /** The retries' calls per (run, model) over every run. */
  usageByRun(): RunRetryUsage[] {
    return this.stmt.usageByRun.all();
  }
}
