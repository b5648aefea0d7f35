/**
 * The reads the app, the HTTP API and the engine make of runs, jobs and records: one room of the
 * store, every query prepared once on the store's connection. Pages are keyset-paginated on seq
 * and read a page at a time, so no statement stays open between pages and writes find the
 * connection free.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import type { HostWait, Job, JobId, JobStatus, ModelUsage, Run, RunId, RunPrices, RunStatus, StoredResponse, VignetteFailure } from '../domain.js';
import { toJob, toRun, toStoredResponse, type JobRow, type ResponseRow, type RunRow, type VignetteFailureRow } from './run-rows.js';
import { STAGES_OF_PAGE, stagesBySeq, type StageRow } from './stage-rows.js';

/** A field left out or undefined does not filter. */
export interface ResponseFilter {
  model?: string | undefined;
  epoch?: number | undefined;
  vignetteId?: string | undefined;
  /** Substring of the response text (case-insensitive). */
  text?: string | undefined;
}

/** A page of a run's stored responses, as the store keeps them (the service prices them into the contract's ResponsesPage). */
export interface StoredResponsesPage {
  items: StoredResponse[];
  /** Pass back as `cursor` for the next page; null at the end. */
  nextCursor: number | null;
}

export interface RunListOptions {
  limit?: number | undefined;
  status?: RunStatus | undefined;
  /** Archived runs are left out unless asked for (`include`: with the others; `only`: just them). */
  archived?: 'hide' | 'include' | 'only' | undefined;
  /** Words each found in the run's id, name, notes, tags or manifest path (any case). */
  search?: string | undefined;
}

const JOB_COLUMNS = `j.id, j.run_id, j.model, j.epoch, j.status, j.attempt, j.worker_id, j.vignettes_done,
  j.input_tokens, j.output_tokens, j.started_at, j.finished_at, j.error, j.waiting_for_host, r.vignette_count`;

interface UsageRow {
  model: string;
  input: number;
  output: number;
  calls: number;
  cached_calls: number;
  cached_input: number;
  cached_output: number;
}

function toModelUsage(r: UsageRow): ModelUsage {
  return {
    model: r.model,
    inputTokens: r.input,
    outputTokens: r.output,
    calls: r.calls,
    cachedCalls: r.cached_calls,
    cachedInputTokens: r.cached_input,
    cachedOutputTokens: r.cached_output,
  };
}

const USAGE_COLUMNS = `model, SUM(input_tokens) AS input, SUM(output_tokens) AS output, SUM(vignettes_done) AS calls,
  SUM(cached_calls) AS cached_calls, SUM(cached_input_tokens) AS cached_input, SUM(cached_output_tokens) AS cached_output`;

const RESPONSE_COLUMNS = `s.seq, s.job_id, s.vignette_idx, s.response, s.input_tokens, s.output_tokens,
  s.cached_tokens, s.reasoning_tokens, s.latency_ms, s.host, s.cached, s.finished_at, s.finish_reason,
  j.run_id, j.model, j.epoch, v.vignette_id, v.prompt, v.system, v.messages, v.target, v.metadata, r.options`;

// CROSS JOIN keeps responses the outer loop, walked in seq order: a page (`seq > cursor ... LIMIT n`)
// then reads n rows, where letting SQLite start from the run's jobs sorted the whole run per page.
/** One vignette's records: from the run's jobs through the unique (job, vignette) key. */
const VIGNETTE_RESPONSE_JOINS = `FROM jobs j
  CROSS JOIN responses s ON s.job_id = j.id AND s.vignette_idx = @idx
  JOIN runs r ON r.id = j.run_id
  JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx`;

const RESPONSE_JOINS = `FROM responses s
  CROSS JOIN jobs j ON j.id = s.job_id
  JOIN runs r ON r.id = j.run_id
  JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx`;

export class RunQueries {
  private readonly stmt;

  constructor(private readonly db: Database.Database) {
    this.stmt = {
      getRun: db.prepare<[string], RunRow>(`SELECT * FROM runs WHERE id = ?`),
      jobsOfRun: db.prepare<[string], JobRow>(
        `SELECT ${JOB_COLUMNS} FROM jobs j JOIN runs r ON r.id = j.run_id WHERE j.run_id = ? ORDER BY j.model, j.epoch`,
      ),
      getJob: db.prepare<[number], JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs j JOIN runs r ON r.id = j.run_id WHERE j.id = ?`),
      runSeqRange: db.prepare<[string], { lo: number | null; hi: number | null }>(
        `SELECT MIN(first_seq) AS lo, MAX(last_seq) AS hi FROM jobs WHERE run_id = ?`,
      ),
      vignetteIndex: db.prepare<[string, string], { idx: number }>(
        `SELECT idx FROM vignettes WHERE run_id = ? AND vignette_id = ?`,
      ),
      vignetteFailures: db.prepare<[string, number], VignetteFailureRow>(
        `SELECT f.job_id, f.vignette_idx, v.vignette_id, j.model, j.epoch, f.attempts, f.code, f.message, f.at
         FROM vignette_failures f JOIN jobs j ON j.id = f.job_id
           JOIN vignettes v ON v.run_id = j.run_id AND v.idx = f.vignette_idx
         WHERE j.run_id = ? ORDER BY j.model, j.epoch, f.vignette_idx LIMIT ?`,
      ),
      vignetteFailureCount: db.prepare<[string], { n: number }>(
        `SELECT COUNT(*) AS n FROM vignette_failures f JOIN jobs j ON j.id = f.job_id WHERE j.run_id = ?`,
      ),
      runWaiting: db.prepare<[string], { waiting_for_host: string }>(
        `SELECT waiting_for_host FROM jobs WHERE run_id = ? AND waiting_for_host IS NOT NULL
         ORDER BY json_extract(waiting_for_host, '$.since') LIMIT 1`,
      ),
      runPrices: db.prepare<[string], { prices: string | null }>(`SELECT prices FROM runs WHERE id = ?`),
      anyRunWithoutPrices: db.prepare<[], { any: number }>(`SELECT EXISTS (SELECT 1 FROM runs WHERE prices IS NULL) AS any`),
      usageAll: db.prepare<[], UsageRow>(`SELECT ${USAGE_COLUMNS} FROM jobs GROUP BY model HAVING SUM(vignettes_done) > 0 ORDER BY model`),
      usageByRun: db.prepare<[], UsageRow & { run_id: string; prices: string | null }>(
        `SELECT j.run_id, r.prices, ${USAGE_COLUMNS} FROM jobs j JOIN runs r ON r.id = j.run_id
         GROUP BY j.run_id, j.model HAVING SUM(vignettes_done) > 0`,
      ),
      usageRun: db.prepare<[string], UsageRow>(`SELECT ${USAGE_COLUMNS} FROM jobs WHERE run_id = ? GROUP BY model ORDER BY model`),
      responsesPage: db.prepare<[string, number, number, number], ResponseRow>(
        `SELECT ${RESPONSE_COLUMNS} ${RESPONSE_JOINS} WHERE j.run_id = ? AND s.seq > ? AND s.seq <= ? ORDER BY s.seq LIMIT ?`,
      ),
      stagesOfPage: db.prepare<[string, number, number], StageRow>(STAGES_OF_PAGE),
      responseCount: db.prepare<[string], { n: number }>(
        `SELECT COALESCE(SUM(vignettes_done), 0) AS n FROM jobs WHERE run_id = ?`,
      ),
    };
  }

  getRun(runId: RunId): Run | null {
    const row = this.stmt.getRun.get(runId);
    return row ? toRun(row) : null;
  }

  listRuns(opts: RunListOptions = {}): Run[] {
    const limit = Math.min(Math.max(opts.limit ?? 100, 1), 1000);
    const where: string[] = [];
    const values: Record<string, string | number> = { limit };
    if (opts.status) (where.push('status = @status'), (values.status = opts.status));
    const archived = opts.archived ?? 'hide';
    if (archived === 'hide') where.push('archived_at IS NULL');
    if (archived === 'only') where.push('archived_at IS NOT NULL');
    (opts.search ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .slice(0, 8)
      .forEach((word, i) => {
        // LIKE's own wildcards in a word are literal.
        values[`w${i}`] = `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
        where.push(
          `(id LIKE @w${i} ESCAPE '\\' OR name LIKE @w${i} ESCAPE '\\' OR notes LIKE @w${i} ESCAPE '\\' OR tags LIKE @w${i} ESCAPE '\\' OR manifest_path LIKE @w${i} ESCAPE '\\')`,
        );
      });
    const filter = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    return this.db
      .prepare<[Record<string, string | number>], RunRow>(`SELECT * FROM runs ${filter} ORDER BY created_at DESC, rowid DESC LIMIT @limit`)
      .all(values)
      .map(toRun);
  }

  /** The newest runs with what shows their progress, to tell which another process changed. */
  runProgress(limit: number): Array<{ id: RunId; status: RunStatus; restarts: number; doneCount: number; failedCount: number; calls: number }> {
    return this.db
      .prepare<[number], { id: string; status: RunStatus; restarts: number; done_count: number; failed_count: number; calls: number }>(
        `SELECT r.id, r.status, r.restarts, r.done_count, r.failed_count,
           (SELECT COALESCE(SUM(j.vignettes_done), 0) FROM jobs j WHERE j.run_id = r.id) AS calls
         FROM runs r ORDER BY r.created_at DESC, r.rowid DESC LIMIT ?`,
      )
      .all(limit)
      .map((r) => ({ id: r.id, status: r.status, restarts: r.restarts, doneCount: r.done_count, failedCount: r.failed_count, calls: r.calls }));
  }

  /** Each job of a run with what shows its progress (status, attempt, records landed). */
  jobProgress(runId: RunId): Array<{ id: JobId; status: JobStatus; attempt: number; done: number }> {
    return this.db
      .prepare<[string], { id: number; status: JobStatus; attempt: number; done: number }>(
        `SELECT id, status, attempt, vignettes_done AS done FROM jobs WHERE run_id = ?`,
      )
      .all(runId);
  }

  /** Runs still to finish: queued ones and those whose owner died. */
  unfinishedRunIds(): RunId[] {
    return this.db
      .prepare<[], { id: string }>(`SELECT id FROM runs WHERE status IN ('queued', 'running') ORDER BY created_at, rowid`)
      .all()
      .map((r) => r.id);
  }

  /**
   * Token totals per model from every landed record (tokens of records served from the prompt
   * cache counted apart: nobody billed them, but the answers carry them), as SQL over the per-job counters that each
   * record's transaction maintains (so the aggregate reads jobs, not a million responses).
   */
  usageByModel(runId?: RunId): ModelUsage[] {
    const rows = runId === undefined ? this.stmt.usageAll.all() : this.stmt.usageRun.all(runId);
    return rows.map(toModelUsage);
  }

  /** Token totals per (run, model), each with the prices its run was created with (null for a run without). */
  usageByRunAndModel(): Array<ModelUsage & { runId: RunId; prices: RunPrices | null }> {
    return this.stmt.usageByRun.all().map((r) => ({
      runId: r.run_id,
      prices: r.prices === null ? null : (JSON.parse(r.prices) as RunPrices),
      ...toModelUsage(r),
    }));
  }

  /** Every record of a run, in sequence order: the run's results. */
  runResults(runId: RunId): StoredResponse[] {
    return [...this.iterateResponses(runId)];
  }

  /**
   * Streams a run's records with seq > afterSeq, in sequence order, without loading them all. Reads
   * a page at a time: a statement left open between yields would keep the connection busy and make
   * every write fail until the consumer (a slow HTTP client, say) finished.
   */
  *iterateResponses(runId: RunId, afterSeq = 0, pageSize = 1000): IterableIterator<StoredResponse> {
    const { lo, hi } = this.runSeqRange(runId);
    for (let cursor = Math.max(afterSeq, lo - 1); cursor < hi; ) {
      const rows = this.stmt.responsesPage.all(runId, cursor, hi, pageSize);
      // A staged template's records carry their calls: one read for the page (none for a run without a template).
      const stages = rows.length === 0 ? undefined : stagesBySeq(this.stmt.stagesOfPage.all(runId, cursor, rows[rows.length - 1]!.seq));
      for (const row of rows) {
        const r = toStoredResponse(row);
        const own = stages?.get(row.seq);
        if (own) r.stages = own;
        yield r;
      }
      if (rows.length < pageSize) return;
      cursor = rows[rows.length - 1]!.seq;
    }
  }

  responseCount(runId: RunId): number {
    return this.stmt.responseCount.get(runId)?.n ?? 0;
  }

  /**
   * The seq range holding a run's records ({lo: 1, hi: 0} when it has none). Pages walk responses in
   * seq order within this range only, so another run's records never make a page slow.
   */
  private runSeqRange(runId: RunId): { lo: number; hi: number } {
    const r = this.stmt.runSeqRange.get(runId);
    return r && r.lo !== null && r.hi !== null ? { lo: r.lo, hi: r.hi } : { lo: 1, hi: 0 };
  }

  /** One page of a run's records, filtered, in sequence order (keyset pagination on seq). */
  responses(runId: RunId, filter: ResponseFilter = {}, page: { limit?: number | undefined; cursor?: number | undefined } = {}): StoredResponsesPage {
    const limit = Math.min(Math.max(page.limit ?? 100, 1), 1000);
    const { lo, hi } = this.runSeqRange(runId);
    const params: Record<string, unknown> = { runId, cursor: Math.max(page.cursor ?? 0, lo - 1), hi, limit: limit + 1 };
    if (filter.vignetteId !== undefined) {
      // One vignette: its records are found through the (job, vignette) key, one per job, not by a scan.
      const v = this.stmt.vignetteIndex.get(runId, filter.vignetteId);
      if (!v) return { items: [], nextCursor: null };
      params.idx = v.idx;
    }
    const where = params.idx === undefined ? ['j.run_id = @runId', 's.seq > @cursor', 's.seq <= @hi'] : ['j.run_id = @runId', 's.seq > @cursor'];
    if (filter.model !== undefined) {
      where.push('j.model = @model');
      params.model = filter.model;
    }
    if (filter.epoch !== undefined) {
      where.push('j.epoch = @epoch');
      params.epoch = filter.epoch;
    }
    if (filter.text !== undefined && filter.text !== '') {
      where.push(`(instr(lower(s.response), lower(@text)) > 0 OR instr(lower(v.prompt), lower(@text)) > 0 OR instr(lower(v.vignette_id), lower(@text)) > 0)`);
      params.text = filter.text;
    }
    const from = params.idx === undefined ? RESPONSE_JOINS : VIGNETTE_RESPONSE_JOINS;
    const rows = this.db
      .prepare<Record<string, unknown>, ResponseRow>(
        `SELECT ${RESPONSE_COLUMNS} ${from} WHERE ${where.join(' AND ')} ORDER BY s.seq LIMIT @limit`,
      )
      .all(params);
    const items = rows.slice(0, limit).map(toStoredResponse);
    const nextCursor = rows.length > limit ? items[items.length - 1]!.seq : null;
    return { items, nextCursor };
  }

  jobs(runId: RunId): Job[] {
    return this.stmt.jobsOfRun.all(runId).map(toJob);
  }

  getJob(jobId: JobId): Job | null {
    const row = this.stmt.getJob.get(jobId);
    return row ? toJob(row) : null;
  }

  /** The vignettes a run gave up on, by model, epoch and manifest order (at most `limit`). */
  vignetteFailures(runId: RunId, limit = 1000): VignetteFailure[] {
    return this.stmt.vignetteFailures.all(runId, limit).map((r) => ({
      jobId: r.job_id,
      vignetteId: r.vignette_id,
      vignetteIndex: r.vignette_idx,
      model: r.model,
      epoch: r.epoch,
      attempts: r.attempts,
      code: r.code,
      message: r.message,
      at: r.at,
    }));
  }

  /** The host some job of the run is waiting for (the longest-waiting), or null. */
  waitingForHost(runId: RunId): HostWait | null {
    const row = this.stmt.runWaiting.get(runId);
    return row ? (JSON.parse(row.waiting_for_host) as HostWait) : null;
  }

  vignetteFailureCount(runId: RunId): number {
    return this.stmt.vignetteFailureCount.get(runId)!.n;
  }

  /** Whether a run made before runs kept their prices is stored here (it is priced by the catalog). */
  hasRunsWithoutPrices(): boolean {
    return this.stmt.anyRunWithoutPrices.get()!.any === 1;
  }

  /** The prices a run is costed at, when it was created with them. */
  runPrices(runId: RunId): RunPrices | null {
    const row = this.stmt.runPrices.get(runId);
    return row?.prices ? (JSON.parse(row.prices) as RunPrices) : null;
  }
}
