/**
 * What a pairwise judge compares a page of records with: for each record (vignette v, model m,
 * epoch e) of the page, the answer of the run's baseline model to v at e, read beside it in one
 * query per page (never one per record), or why there is none yet or will be none.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import { TERMINAL_RUN_STATUSES, type JobStatus, type RunId, type RunStatus } from '../domain.js';

/** The baseline's answer to one record's vignette and epoch, by where its baseline job stands. */
export type RecordBaseline =
  | { seq: number; state: 'answered'; response: string }
  /** The baseline's job may still answer: the record must wait, neither scored nor skipped. */
  | { seq: number; state: 'waiting' }
  /** There is no answer and will be none: the record cannot be scored, for this reason. */
  | { seq: number; state: 'missing'; why: string };

type BaselineRow = [seq: number, epoch: number, response: string | null, jobStatus: JobStatus | null, failure: string | null, runStatus: RunStatus];

const OPEN_JOB: readonly (JobStatus | null)[] = ['pending', 'running'];

export class BaselineReads {
  private readonly page: Database.Statement<[string, string, number, number, number], BaselineRow>;

  constructor(db: Database.Database) {
    // The page's records by seq (as the scoring page reads them), then the baseline's job of the same
    // epoch by the jobs' unique (run, model, epoch) key and its record by the unique (job, vignette) key.
    this.page = db
      .prepare<[string, string, number, number, number], BaselineRow>(
        `SELECT s.seq, j.epoch, b.response, bj.status, COALESCE(vf.message, bj.error), r.status
         FROM responses s CROSS JOIN jobs j ON j.id = s.job_id
           JOIN runs r ON r.id = j.run_id
           LEFT JOIN jobs bj ON bj.run_id = j.run_id AND bj.model = ? AND bj.epoch = j.epoch
           LEFT JOIN responses b ON b.job_id = bj.id AND b.vignette_idx = s.vignette_idx
           LEFT JOIN vignette_failures vf ON vf.job_id = bj.id AND vf.vignette_idx = s.vignette_idx
         WHERE j.run_id = ? AND s.seq > ? AND s.seq <= ? ORDER BY s.seq LIMIT ?`,
      )
      .raw(true);
  }

  /**
   * For the records `recordsToScore` reads with the same arguments (afterSeq < seq <= throughSeq,
   * in seq order, at most `limit`), the baseline model's answer to each, in the same order.
   */
  of(runId: RunId, baseline: string, afterSeq: number, throughSeq: number, limit: number): RecordBaseline[] {
    return this.page.all(baseline, runId, afterSeq, throughSeq, limit).map(([seq, epoch, response, jobStatus, failure, runStatus]): RecordBaseline => {
      if (response !== null) return { seq, state: 'answered', response };
      if (jobStatus === null) return { seq, state: 'missing', why: `the run has no baseline model "${baseline}" at epoch ${epoch}` };
      if (OPEN_JOB.includes(jobStatus) && !TERMINAL_RUN_STATUSES.includes(runStatus)) return { seq, state: 'waiting' };
      const ended = OPEN_JOB.includes(jobStatus) ? `the run ended (${runStatus}) before the baseline "${baseline}" answered at epoch ${epoch}` : `the baseline "${baseline}"'s job at epoch ${epoch} ended (${jobStatus}) without an answer to this vignette`;
      return { seq, state: 'missing', why: failure === null ? ended : `${ended}: ${failure}` };
    });
  }
}
