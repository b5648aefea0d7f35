/**
 * The SQL that lands a job's records: the only code that writes the responses table. A batch lands
 * for the current attempt of a running job only, skipping a record that already landed; a job's
 * outcome lands its last records and settles the job in the same transaction, once. Every write is
 * fenced by the run's owner when a fence is given (see run-fence.ts). The job ledger
 * (core/scheduler/job-ledger.ts) and the record lander are its callers.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import { PanoptesError, type JobId, type JobOutcome, type JobStatus, type ResponseRecord, type StoredResponse } from '../domain.js';
import type { RunFence } from './run-fence.js';

/** What the landing guard reads of a job: its state, current attempt, run and progress. */
export interface JobGuardRow {
  status: JobStatus;
  attempt: number;
  run_id: string;
  vignettes_done: number;
  vignette_count: number;
}

/** The landing guard's read: a job's state, current attempt, run and progress. The jobs room guards its settlements with the same read. */
export function prepareJobGuard(db: Database.Database): Database.Statement<[number], JobGuardRow> {
  return db.prepare<[number], JobGuardRow>(
    `SELECT j.status, j.attempt, j.run_id, j.vignettes_done, r.vignette_count
     FROM jobs j JOIN runs r ON r.id = j.run_id WHERE j.id = ?`,
  );
}

/** What the store lends: its connection, its fence check and its commit without fsync. */
export interface RecordWritesDeps {
  db: Database.Database;
  hold: (fence: RunFence | undefined) => void;
  withoutSync: <T>(commit: () => T) => T;
}

export class RecordWrites {
  private readonly db: Database.Database;
  private readonly hold: RecordWritesDeps['hold'];
  private readonly withoutSync: RecordWritesDeps['withoutSync'];
  private readonly jobGuard: Database.Statement<[number], JobGuardRow>;
  private readonly stmt;

  constructor(deps: RecordWritesDeps) {
    ({ db: this.db, hold: this.hold, withoutSync: this.withoutSync } = deps);
    const db = this.db;
    this.jobGuard = prepareJobGuard(db);
    this.stmt = {
      insertResponse: db.prepare(
        `INSERT INTO responses (job_id, vignette_idx, response, input_tokens, output_tokens, cached_tokens,
           reasoning_tokens, latency_ms, host, cached, finished_at, finish_reason)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (job_id, vignette_idx) DO NOTHING`,
      ),
      insertStage: db.prepare(
        `INSERT INTO stage_answers (job_id, vignette_idx, call_idx, stage, item, round, response, input_tokens,
           output_tokens, cached_tokens, reasoning_tokens, latency_ms, host, cached)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      // A landed record carries its calls: those stored as they finished (stage-progress.ts) are done with.
      dropFinishedStages: db.prepare(`DELETE FROM finished_stages WHERE job_id = ? AND vignette_idx = ?`),
      addJobProgress: db.prepare(
        `UPDATE jobs SET vignettes_done = vignettes_done + ?, input_tokens = input_tokens + ?,
           output_tokens = output_tokens + ?, cached_calls = cached_calls + ?, cached_input_tokens = cached_input_tokens + ?,
           cached_output_tokens = cached_output_tokens + ?, first_seq = COALESCE(first_seq, ?), last_seq = ? WHERE id = ?`,
      ),
      markJobDone: db.prepare(`UPDATE jobs SET status = 'done', finished_at = ?, error = NULL, waiting_for_host = NULL WHERE id = ?`),
      bumpDone: db.prepare(`UPDATE runs SET done_count = done_count + 1 WHERE id = ?`),
    };
  }

  /**
   * Lands a batch of records for the current attempt of a running job. Records of a stale attempt,
   * or of a job already settled, are refused; a record that already landed is skipped. Returns the
   * records that landed now, with their sequence numbers, in sequence order. Like
   * `appendBatches`, without an fsync of its own.
   */
  append(jobId: JobId, attempt: number, records: readonly ResponseRecord[], fence?: RunFence): StoredResponse[] {
    return this.appendBatches([{ jobId, attempt, records }], fence)[0]!;
  }

  /**
   * Lands the batches of several jobs in one transaction, each under the same guard as
   * `append`. Returns what landed of each batch, in the batches' order; taken in that order,
   * every record's sequence number is higher than the one before. The commit is made without its
   * fsync (`withoutSync`): the caller syncs (`syncWal`) before it calls the records durable.
   */
  appendBatches(
    batches: ReadonlyArray<{ jobId: JobId; attempt: number; records: readonly ResponseRecord[] }>,
    fence?: RunFence,
  ): StoredResponse[][] {
    if (batches.every((b) => b.records.length === 0)) return batches.map(() => []);
    return this.withoutSync(() =>
      this.db
        .transaction(() => {
          this.hold(fence);
          return batches.map(({ jobId, attempt, records }) => {
            if (records.length === 0) return [];
            const guard = this.jobGuard.get(jobId);
            if (!guard || guard.status !== 'running' || guard.attempt !== attempt) return [];
            return this.insert(jobId, records);
          });
        })
        .immediate(),
    );
  }

  private insert(jobId: JobId, records: readonly ResponseRecord[]): StoredResponse[] {
    const landed: StoredResponse[] = [];
    let input = 0;
    let output = 0;
    let cachedCalls = 0;
    let cachedInput = 0;
    let cachedOutput = 0;
    for (const r of records) {
      const res = this.stmt.insertResponse.run(
        jobId,
        r.vignetteIndex,
        r.response,
        r.usage.inputTokens,
        r.usage.outputTokens,
        r.usage.cachedTokens ?? null,
        r.usage.reasoningTokens ?? null,
        Math.round(r.latencyMs),
        r.host,
        r.cached ? 1 : 0,
        r.finishedAt,
        r.finishReason ?? null,
      );
      if (res.changes === 1) {
        landed.push({ ...r, seq: Number(res.lastInsertRowid) });
        r.stages?.forEach((st, i) =>
          this.stmt.insertStage.run(jobId, r.vignetteIndex, i, st.stage, st.item, st.round, st.response, st.usage.inputTokens,
            st.usage.outputTokens, st.usage.cachedTokens ?? null, st.usage.reasoningTokens ?? null, Math.round(st.latencyMs), st.host, st.cached ? 1 : 0),
        );
        if (r.stages) this.stmt.dropFinishedStages.run(jobId, r.vignetteIndex);
        // A record answered from the prompt cache is a call, but no provider billed its tokens.
        if (r.cached) {
          cachedCalls += 1;
          cachedInput += r.usage.inputTokens;
          cachedOutput += r.usage.outputTokens;
        } else {
          input += r.usage.inputTokens;
          output += r.usage.outputTokens;
        }
      }
    }
    if (landed.length > 0) {
      // Seqs only grow, so the batch's first and last are the job's newest bounds.
      this.stmt.addJobProgress.run(
        landed.length,
        input,
        output,
        cachedCalls,
        cachedInput,
        cachedOutput,
        landed[0]!.seq,
        landed[landed.length - 1]!.seq,
        jobId,
      );
    }
    return landed;
  }

  /**
   * Settles a job as done: writes any records the outcome still carries, marks the job done and
   * advances the run's doneCount, all in one transaction and only the first time the job lands
   * with its current attempt. A duplicate or a stale attempt changes nothing (`landed: false`).
   * `posed` is how many vignettes the job was given when that is fewer than the run's (a run posed
   * until decided stops a model once its pairs are decided): those must all have a record.
   */
  settle(
    outcome: JobOutcome,
    records: readonly ResponseRecord[] = [],
    fence?: RunFence,
    posed?: number,
  ): { landed: boolean; records: StoredResponse[] } {
    return this.db
      .transaction(() => {
        this.hold(fence);
        const guard = this.jobGuard.get(outcome.jobId);
        if (!guard || guard.status === 'done' || guard.status === 'failed' || guard.status === 'cancelled') {
          return { landed: false, records: [] };
        }
        if (guard.attempt !== outcome.attempt) return { landed: false, records: [] };
        const stored = this.insert(outcome.jobId, records);
        const done = guard.vignettes_done + stored.length;
        const expected = Math.min(posed ?? guard.vignette_count, guard.vignette_count);
        if (done < expected) {
          throw new PanoptesError(
            'worker_lost',
            `job ${outcome.jobId} reported done with ${done} of ${expected} records`,
            { retryable: true },
          );
        }
        this.stmt.markJobDone.run(Date.now(), outcome.jobId);
        this.stmt.bumpDone.run(guard.run_id);
        return { landed: true, records: stored };
      })
      .immediate();
  }
}
