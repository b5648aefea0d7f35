/**
 * The reads the app, the HTTP API and the engine make of runs, jobs and records: one room of the
 * store, every query prepared once on the store's connection. Pages are keyset-paginated on seq
 * and read a page at a time, so no statement stays open between pages and writes find the
 * connection free.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import { PanoptesError, type HostWait, type Job, type JobId, type ModelUsage, type Run, type RunId, type RunPrices, type RunStatus, type StageAnswer, type StoredResponse, type VignetteFailure } from '../domain.js';
import { toJob, toRun, toStoredResponse, type JobRow, type ResponseRow, type RunRow, type VignetteFailureRow } from './run-rows.js';
import { STAGES_OF_PAGE, stagesBySeq, toStageAnswer, type StageRow } from './stage-rows.js';
import { searchClauses, type ResponseScoreFilter } from './response-search.js';
import { pageSql, RESPONSE_COLUMNS, RESPONSE_JOINS, startKeySql, type PageSort, type PageSpec } from './response-page-query.js';

/** One row of the change sequence: what moved, and its number (see the migration that made it). */
export interface StoredChange {
  kind: 'run' | 'job' | 'scoring';
  runId: RunId;
  /** The job for a 'job' change; 0 otherwise. */
  jobId: JobId;
  seq: number;
}

/** A field left out or undefined does not filter. */
export interface ResponseFilter extends ResponseScoreFilter {
  model?: string | undefined;
  epoch?: number | undefined;
  vignetteId?: string | undefined;
  /** Substring of the response text (case-insensitive). */
  text?: string | undefined;
}

/** A page of a run's stored responses, as the store keeps them (the service prices them into the contract's ResponsesPage). */
export interface StoredResponsesPage {
  items: StoredResponse[];
  /** Pass back as `cursor` for the next page; null at the end (and on a sorted page read by `after`). */
  nextCursor: number | null;
  /** Pass back as `after` for the next page, in any order: the seq of this page's last record; null at the end. */
  nextAfter: number | null;
}

/** Which page of a run's records: its size, and where it starts (at most one of `after` and `cursor`). */
export interface ResponsesPageRequest {
  limit?: number | undefined;
  /** The seq of the previous page's last record (keyset paging, any order). */
  after?: number | undefined;
  /** The older cursor: the last seq read in seq order, the page's offset in any other. */
  cursor?: number | undefined;
}

/** A page's SQL and parameters, made on the store's connection and run on it or on the reader's (response-reader.ts). */
export interface ResponsesPageQuery {
  sql: string;
  params: Record<string, unknown>;
  limit: number;
  /** What the page's `nextCursor` is: the last seq, the next offset, or none. */
  next: { cursor: 'seq' } | { cursor: 'offset'; offset: number } | { cursor: 'none' };
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
      // A panel's verdicts come from judges past the first: its mean is sorted, not walked (the value index has judge second).
      scorerHasPanel: db.prepare<[number], { any: number }>(`SELECT EXISTS (SELECT 1 FROM scores WHERE scorer_id = ? AND judge > 0 AND failed = 0) AS any`),
      responseCount: db.prepare<[string], { n: number }>(
        `SELECT COALESCE(SUM(vignettes_done), 0) AS n FROM jobs WHERE run_id = ?`,
      ),
    };
  }

  /** The calls behind one staged record, in call order (none for a record without a template). */
  stagesOfRecord(runId: RunId, seq: number): StageAnswer[] {
    return this.stmt.stagesOfPage.all(runId, seq - 1, seq).map(toStageAnswer);
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

  /** The seq of the run's last landed record (0 when none): each job keeps its last, written with its records. */
  lastRecordSeq(runId: RunId): number {
    return this.db.prepare<[string], { hi: number | null }>(`SELECT MAX(last_seq) AS hi FROM jobs WHERE run_id = ?`).get(runId)?.hi ?? 0;
  }

  /** The highest number of the change sequence (0 before any change). */
  lastChange(): number {
    return this.db.prepare<[], { seq: number }>(`SELECT COALESCE(MAX(seq), 0) AS seq FROM changes`).get()!.seq;
  }

  /** What changed after `seq`, in order: a run's row, one of its jobs, or its scoring. */
  changesSince(seq: number, limit: number): StoredChange[] {
    return this.db
      .prepare<[number, number], { kind: StoredChange['kind']; run_id: string; job_id: number; seq: number }>(
        `SELECT kind, run_id, job_id, seq FROM changes WHERE seq > ? ORDER BY seq LIMIT ?`,
      )
      .all(seq, limit)
      .map((r) => ({ kind: r.kind, runId: r.run_id, jobId: r.job_id, seq: r.seq }));
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

  /**
   * What one page of a run's records reads: its SQL and parameters (response-page-query.ts says how
   * each order is walked), or null when nothing can match (an unknown vignette). A page starts
   * `after` a record of the run (keyset paging in any order), or at `cursor`: the last seq read in
   * seq order, the page's offset in any other (the older paging, kept for its clients).
   */
  responsesQuery(runId: RunId, filter: ResponseFilter = {}, page: ResponsesPageRequest = {}): ResponsesPageQuery | null {
    const limit = Math.min(Math.max(page.limit ?? 100, 1), 1000);
    const { lo, hi } = this.runSeqRange(runId);
    const params: Record<string, unknown> = { runId, lo, hi };
    const vignette = filter.vignetteId !== undefined;
    if (filter.vignetteId !== undefined) {
      // One vignette: its records are found through the (job, vignette) key, one per job, not by a scan.
      const v = this.stmt.vignetteIndex.get(runId, filter.vignetteId);
      if (!v) return null;
      params.idx = v.idx;
    }
    const where = searchClauses(filter, params);
    if (filter.model !== undefined) (where.push('j.model = @model'), (params.model = filter.model));
    if (filter.epoch !== undefined) (where.push('j.epoch = @epoch'), (params.epoch = filter.epoch));
    if (filter.text !== undefined && filter.text !== '') {
      // instr, not LIKE: the text is found as written, its % and _ included.
      where.push(`(instr(lower(s.response), lower(@text)) > 0 OR instr(lower(v.prompt), lower(@text)) > 0 OR instr(lower(v.vignette_id), lower(@text)) > 0)`);
      params.text = filter.text;
    }
    const by = filter.sort?.by ?? 'seq';
    const scorerId = filter.sort?.scorerId ?? -1;
    const sort: PageSort = { by, desc: filter.sort?.desc === true, scorerId, panel: by === 'score' && this.stmt.scorerHasPanel.get(scorerId)!.any === 1 };
    let start: PageSpec['start'] = null;
    if (page.after !== undefined) {
      const row = this.db.prepare<Record<string, unknown>, { k: number | string | null }>(startKeySql(sort)).get({ runId, after: page.after, sortScorer: scorerId });
      if (!row) throw new PanoptesError('invalid_input', `after: no record ${page.after} in run ${runId}`, { where: 'after' });
      start = { after: page.after, key: row.k };
    } else if (page.cursor !== undefined) {
      start = by === 'seq' && !sort.desc ? { after: page.cursor, key: page.cursor } : { offset: page.cursor };
    }
    const sql = pageSql({ where, params, vignette, sort, rows: limit + 1, start });
    // The older cursor goes on as it was: the last seq in seq order, else the next page's offset; paged by `after`, a sorted page has none.
    const seqOrder = by === 'seq' && !sort.desc;
    const next: ResponsesPageQuery['next'] = seqOrder ? { cursor: 'seq' } : page.after !== undefined ? { cursor: 'none' } : { cursor: 'offset', offset: page.cursor ?? 0 };
    return { sql, params, limit, next };
  }

  /** A page's rows as records, with where the next page starts (see `responsesQuery`). */
  responsesPage(query: ResponsesPageQuery, rows: readonly ResponseRow[]): StoredResponsesPage {
    const items = rows.slice(0, query.limit).map(toStoredResponse);
    const last = rows.length > query.limit ? items[items.length - 1]!.seq : null;
    const { next } = query;
    const nextCursor = last === null || next.cursor === 'none' ? null : next.cursor === 'seq' ? last : next.offset + query.limit;
    return { items, nextCursor, nextAfter: last };
  }

  /** One page of a run's records, read here on the store's connection (response-reader.ts reads off the main thread). */
  responses(runId: RunId, filter: ResponseFilter = {}, page: ResponsesPageRequest = {}): StoredResponsesPage {
    const query = this.responsesQuery(runId, filter, page);
    if (query === null) return { items: [], nextCursor: null, nextAfter: null };
    return this.responsesPage(query, this.db.prepare<Record<string, unknown>, ResponseRow>(query.sql).all(query.params));
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
