/**
 * Scoring's SQL, on the Store's own better-sqlite3 connection: scorer versions, the scorers
 * attached to each run with their durable cursor and lease, and the scores. Exactly once per
 * (record, scorer version, judge) holds by the scores' primary key and by the cursor committing in
 * the same transaction as the scores it covers; the lease keeps a second process from scoring the
 * same (run, scorer) and so from paying for a judge call twice.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import type { ModelUsage, RunId } from '../domain.js';
import { BaselineReads } from './baseline-reads.js';
import { ownerIsDeadLocally } from './owner-liveness.js';
import type { Store } from './store.js';

export type StoredSeverity = 'none' | 'soft' | 'hard';
export const SEVERITY_CODE: Record<StoredSeverity, number> = { none: 0, soft: 1, hard: 2 };
export const SEVERITY_NAME: readonly StoredSeverity[] = ['none', 'soft', 'hard'];

export interface NewScorerVersion {
  version: string;
  name: string;
  kind: 'pass_fail' | 'graded';
  layer: 'rule' | 'plugin' | 'judge';
  judges: readonly string[];
  definition: unknown;
}

/** A scorer attached to a run, with its progress. */
export interface RunScorer {
  runId: RunId;
  scorerId: number;
  version: string;
  name: string;
  kind: 'pass_fail' | 'graded';
  layer: 'rule' | 'plugin' | 'judge';
  judges: string[];
  definition: unknown;
  position: number;
  scoredSeq: number;
  done: number;
  failed: number;
  owner: string | null;
  leaseUntil: number | null;
}

/** What a scorer needs of one record, without the vignette (read once per vignette, not per record). */
export interface RecordToScore {
  seq: number;
  response: string;
  vignetteIdx: number;
  model: string;
  epoch: number;
  vignette: StoredVignetteForScoring;
}

/** A record with its vignette, as the page query returns it: an array, which better-sqlite3 builds a third faster than an object. */
type RecordRow = [
  seq: number,
  response: string,
  vignetteIdx: number,
  model: string,
  epoch: number,
  vignetteId: string,
  prompt: string,
  system: string | null,
  target: string | null,
  metadata: string | null,
];

/** A vignette as scorers see it; `metadata` may be shared by the records of a page: read it, never change it. */
export interface StoredVignetteForScoring {
  id: string;
  prompt: string;
  system?: string;
  target?: string;
  metadata?: Record<string, unknown>;
}

/** One score to write. */
export interface NewScore {
  seq: number;
  judge: number;
  value: number;
  passed: boolean | null;
  severity: StoredSeverity;
  /** Stored only when not empty. */
  explanation: string;
  failed: boolean;
  /** A judge's verdict: what its calls used, added to the run's judge usage when the score is stored. */
  usage?: JudgeUsage;
}

/** What one judge's calls used over a page of scores. */
export type JudgeUsage = Omit<ModelUsage, 'model'> & { judge: string };

function addUsage(into: Map<string, JudgeUsage>, u: JudgeUsage): void {
  const sum = into.get(u.judge) ?? { judge: u.judge, calls: 0, inputTokens: 0, outputTokens: 0, cachedCalls: 0, cachedInputTokens: 0, cachedOutputTokens: 0 };
  sum.calls += u.calls;
  sum.inputTokens += u.inputTokens;
  sum.outputTokens += u.outputTokens;
  sum.cachedCalls += u.cachedCalls;
  sum.cachedInputTokens += u.cachedInputTokens;
  sum.cachedOutputTokens += u.cachedOutputTokens;
  into.set(u.judge, sum);
}

/** One score as reports read it. */
export interface StoredScoreCell {
  seq: number;
  model: string;
  epoch: number;
  vignetteIdx: number;
  vignetteId: string;
  judge: number;
  value: number;
  passed: boolean | null;
  /** The vignette's value of the metadata key asked for, as text; null without one. */
  group: string | null;
}

/** One score as exports and details read it. */
export interface ScoreLine extends Omit<StoredScoreCell, 'group'> {
  /** 1 for the sweep's record; 2 and on for a retry on a hard fail. */
  attempt: number;
  scorerName: string;
  version: string;
  judges: string[];
  severity: StoredSeverity;
  explanation: string;
}

/** One verdict as the vignette x model matrix reads it: where it belongs, and its value. */
export interface MatrixScore {
  model: string;
  epoch: number;
  vignetteIdx: number;
  judge: number;
  value: number;
  passed: boolean | null;
}

/** A vignette's id and metadata, without its prompt: what a row of the matrix is headed by. */
export interface VignetteHead {
  idx: number;
  id: string;
  metadata?: Record<string, unknown>;
}

/** One score of one record, for every scorer version attached to its run (in the order attached). */
export interface RecordScore {
  scorerName: string;
  version: string;
  /** The judge's logical model (LLM judges); null for rules and plugins. */
  judge: string | null;
  value: number;
  passed: boolean | null;
  severity: StoredSeverity;
  explanation: string;
}

interface RunScorerRow {
  run_id: string;
  scorer_id: number;
  version: string;
  name: string;
  kind: 'pass_fail' | 'graded';
  layer: 'rule' | 'plugin' | 'judge';
  judges: string;
  definition: string;
  position: number;
  scored_seq: number;
  done_count: number;
  failed_count: number;
  owner: string | null;
  lease_until: number | null;
}

interface CellRow {
  seq: number;
  model: string;
  epoch: number;
  vignette_idx: number;
  vignette_id: string;
  judge: number;
  value: number;
  passed: number | null;
  grp?: string | number | null;
}

interface LineRow extends CellRow {
  name: string;
  version: string;
  judges: string;
  severity: number;
  explanation: string | null;
  position: number;
  attempt: number;
}

/** Export order: record, scorer (in the order attached), attempt, judge. */
function lineOrder(a: LineRow, b: LineRow): number {
  return a.seq - b.seq || a.position - b.position || a.attempt - b.attempt || a.judge - b.judge;
}

const RUN_SCORER_COLUMNS = `rs.run_id, rs.scorer_id, sc.version, sc.name, sc.kind, sc.layer, sc.judges, sc.definition,
  rs.position, rs.scored_seq, rs.done_count, rs.failed_count, rs.owner, rs.lease_until`;

function toRunScorer(r: RunScorerRow): RunScorer {
  return {
    runId: r.run_id,
    scorerId: r.scorer_id,
    version: r.version,
    name: r.name,
    kind: r.kind,
    layer: r.layer,
    judges: JSON.parse(r.judges) as string[],
    definition: JSON.parse(r.definition) as unknown,
    position: r.position,
    scoredSeq: r.scored_seq,
    done: r.done_count,
    failed: r.failed_count,
    owner: r.owner,
    leaseUntil: r.lease_until,
  };
}

function toCell(r: CellRow): StoredScoreCell {
  return {
    seq: r.seq,
    model: r.model,
    epoch: r.epoch,
    vignetteIdx: r.vignette_idx,
    vignetteId: r.vignette_id,
    judge: r.judge,
    value: r.value,
    passed: r.passed === null ? null : r.passed === 1,
    group: r.grp === null || r.grp === undefined ? null : String(r.grp),
  };
}

/** Which attempt of each record a report reads: the sweep's own record, or the last retry on a hard fail. */
export type ReportAttempt = 'first' | 'final';

type CellsPageArgs = [path: string | null, scorerId: number, afterSeq: number, throughSeq: number, runId: string, limit: number];

/**
 * A page of a scorer's cells. grp: the metadata value a report is sliced by (json_extract of a NULL
 * path is NULL). 'final' takes each verdict from the record's last scored retry where it has one
 * (an index seek on attempt_scores' key per score), else the record's own.
 */
function cellsSql(attempt: ReportAttempt): string {
  const final = attempt === 'final';
  return `SELECT sc.seq, j.model, j.epoch, s.vignette_idx, v.vignette_id, sc.judge,
            ${final ? 'IIF(a.seq IS NULL, sc.value, a.value) AS value, IIF(a.seq IS NULL, sc.passed, a.passed) AS passed' : 'sc.value, sc.passed'},
            json_extract(v.metadata, ?) AS grp
     FROM scores sc CROSS JOIN responses s ON s.seq = sc.seq CROSS JOIN jobs j ON j.id = s.job_id
       JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx
       ${
         final
           ? `LEFT JOIN attempt_scores a ON a.scorer_id = sc.scorer_id AND a.seq = sc.seq AND a.judge = sc.judge
                AND a.attempt = (SELECT MAX(m.attempt) FROM attempt_scores m WHERE m.scorer_id = sc.scorer_id AND m.seq = sc.seq)`
           : ''
       }
     WHERE sc.scorer_id = ? AND sc.seq > ? AND sc.seq <= ? AND j.run_id = ? AND sc.failed = 0
     ORDER BY sc.seq, sc.judge LIMIT ?`;
}

/**
 * A full page may end inside one record's scores (several judges, several scorers): it then drops
 * that record, which the next page (seq > the last kept) starts with. `more` says to read on.
 */
function wholeRecords<R extends { seq: number }>(rows: R[], pageSize: number): { rows: R[]; more: boolean } {
  if (rows.length < pageSize) return { rows, more: false };
  const last = rows[rows.length - 1]!.seq;
  if (rows[0]!.seq === last) return { rows, more: true };
  return { rows: rows.filter((r) => r.seq !== last), more: true };
}

export class ScoreStore {
  private readonly db: Database.Database;
  private readonly stmt: ReturnType<ScoreStore['prepare']>;
  /** A pairwise judge's baseline answers, read beside a page of records. */
  readonly baselines: BaselineReads;

  constructor(private readonly store: Store) {
    this.db = store.db;
    this.stmt = this.prepare();
    this.baselines = new BaselineReads(store.db);
  }

  private prepare() {
    const db = this.db;
    return {
      insertScorer: db.prepare(
        `INSERT INTO scorers (version, name, kind, layer, judges, definition) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (version) DO NOTHING`,
      ),
      scorerId: db.prepare<[string], { id: number }>(`SELECT id FROM scorers WHERE version = ?`),
      attach: db.prepare(
        `INSERT INTO run_scorers (run_id, scorer_id, position)
         VALUES (?, ?, (SELECT COALESCE(MAX(position), -1) + 1 FROM run_scorers WHERE run_id = ?))
         ON CONFLICT (run_id, scorer_id) DO NOTHING`,
      ),
      runScorers: db.prepare<[string], RunScorerRow>(
        `SELECT ${RUN_SCORER_COLUMNS} FROM run_scorers rs JOIN scorers sc ON sc.id = rs.scorer_id
         WHERE rs.run_id = ? ORDER BY rs.position`,
      ),
      runScorer: db.prepare<[string, number], RunScorerRow>(
        `SELECT ${RUN_SCORER_COLUMNS} FROM run_scorers rs JOIN scorers sc ON sc.id = rs.scorer_id
         WHERE rs.run_id = ? AND rs.scorer_id = ?`,
      ),
      // Behind: the run has records past the cursor.
      behind: db.prepare<[], RunScorerRow>(
        `SELECT ${RUN_SCORER_COLUMNS} FROM run_scorers rs JOIN scorers sc ON sc.id = rs.scorer_id
         WHERE rs.scored_seq < (SELECT COALESCE(MAX(last_seq), 0) FROM jobs WHERE run_id = rs.run_id)
         ORDER BY rs.run_id, rs.position`,
      ),
      lastSeq: db.prepare<[string], { hi: number | null }>(`SELECT MAX(last_seq) AS hi FROM jobs WHERE run_id = ?`),
      claim: db.prepare(
        `UPDATE run_scorers SET owner = @owner, lease_until = @until
         WHERE run_id = @runId AND scorer_id = @scorerId
           AND (owner IS NULL OR owner = @owner OR lease_until < @now OR owner = @dead)`,
      ),
      release: db.prepare(`UPDATE run_scorers SET owner = NULL, lease_until = NULL WHERE run_id = ? AND scorer_id = ? AND owner = ?`),
      guard: db.prepare<[string, number], { owner: string | null }>(`SELECT owner FROM run_scorers WHERE run_id = ? AND scorer_id = ?`),
      // Each record with its vignette, in one query: a page reads no other table row by row.
      recordsPage: db
        .prepare<[string, number, number, number], RecordRow>(
          `SELECT s.seq, s.response, s.vignette_idx, j.model, j.epoch, v.vignette_id, v.prompt, v.system, v.target, v.metadata
           FROM responses s CROSS JOIN jobs j ON j.id = s.job_id
           JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx
           WHERE j.run_id = ? AND s.seq > ? AND s.seq <= ? ORDER BY s.seq LIMIT ?`,
        )
        .raw(true),
      insertScore: db.prepare(
        `INSERT INTO scores (scorer_id, seq, judge, value, passed, severity, explanation, failed)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scorer_id, seq, judge) DO NOTHING`,
      ),
      addJudgeUsage: db.prepare(
        `INSERT INTO judge_usage (run_id, scorer_id, judge, calls, input_tokens, output_tokens, cached_calls, cached_input_tokens, cached_output_tokens)
         VALUES (@runId, @scorerId, @judge, @calls, @inputTokens, @outputTokens, @cachedCalls, @cachedInputTokens, @cachedOutputTokens)
         ON CONFLICT (run_id, scorer_id, judge) DO UPDATE SET calls = calls + excluded.calls,
           input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens,
           cached_calls = cached_calls + excluded.cached_calls, cached_input_tokens = cached_input_tokens + excluded.cached_input_tokens,
           cached_output_tokens = cached_output_tokens + excluded.cached_output_tokens`,
      ),
      judgeUsage: db.prepare<[string], ModelUsage>(
        `SELECT judge AS model, SUM(calls) AS calls, SUM(input_tokens) AS inputTokens, SUM(output_tokens) AS outputTokens,
           SUM(cached_calls) AS cachedCalls, SUM(cached_input_tokens) AS cachedInputTokens, SUM(cached_output_tokens) AS cachedOutputTokens
         FROM judge_usage WHERE run_id = ? GROUP BY judge ORDER BY judge`,
      ),
      advance: db.prepare(
        `UPDATE run_scorers SET scored_seq = MAX(scored_seq, @through), done_count = done_count + @done,
           failed_count = failed_count + @failed, lease_until = @until
         WHERE run_id = @runId AND scorer_id = @scorerId`,
      ),
      firstFailed: db.prepare<[number, string, number, number], { seq: number | null }>(
        `SELECT MIN(sc.seq) AS seq FROM scores sc CROSS JOIN responses s ON s.seq = sc.seq CROSS JOIN jobs j ON j.id = s.job_id
         WHERE sc.scorer_id = ? AND j.run_id = ? AND sc.failed = 1 AND sc.seq BETWEEN ? AND ?`,
      ),
      deleteFailed: db.prepare(
        `DELETE FROM scores WHERE scorer_id = ? AND failed = 1 AND seq BETWEEN ? AND ?
           AND seq IN (SELECT s.seq FROM responses s JOIN jobs j ON j.id = s.job_id WHERE j.run_id = ?)`,
      ),
      rewind: db.prepare(
        `UPDATE run_scorers SET scored_seq = ?, failed_count = 0 WHERE run_id = ? AND scorer_id = ?`,
      ),
      scoredIn: db.prepare<[number, number, number], number>(`SELECT DISTINCT seq FROM scores WHERE scorer_id = ? AND seq > ? AND seq <= ?`).pluck(),
      runSeqRange: db.prepare<[string], { lo: number | null; hi: number | null }>(
        `SELECT MIN(first_seq) AS lo, MAX(last_seq) AS hi FROM jobs WHERE run_id = ?`,
      ),
      cellsPage: db.prepare<CellsPageArgs, CellRow>(cellsSql('first')),
      finalCellsPage: db.prepare<CellsPageArgs, CellRow>(cellsSql('final')),
      linesPage: db.prepare<[string, number, number, number], LineRow>(
        `SELECT sc.seq, j.model, j.epoch, s.vignette_idx, sc.judge, sc.value, sc.passed, sc.severity, sc.explanation,
                v.vignette_id, scr.name, scr.version, scr.judges, rs.position, 1 AS attempt
         FROM scores sc CROSS JOIN responses s ON s.seq = sc.seq CROSS JOIN jobs j ON j.id = s.job_id
           JOIN scorers scr ON scr.id = sc.scorer_id
           JOIN run_scorers rs ON rs.run_id = j.run_id AND rs.scorer_id = sc.scorer_id
           JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx
         WHERE j.run_id = ? AND sc.seq > ? AND sc.seq <= ? AND sc.failed = 0
         ORDER BY sc.seq, rs.position, sc.judge LIMIT ?`,
      ),
      // The retries' verdicts on a range of records (by attempt_scores' seq index): few, beside the scores.
      attemptLines: db.prepare<[string, number, number], LineRow>(
        `SELECT a.seq, j.model, j.epoch, s.vignette_idx, a.judge, a.value, a.passed, a.severity, a.explanation,
                v.vignette_id, scr.name, scr.version, scr.judges, rs.position, a.attempt
         FROM attempt_scores a CROSS JOIN responses s ON s.seq = a.seq CROSS JOIN jobs j ON j.id = s.job_id
           JOIN scorers scr ON scr.id = a.scorer_id
           JOIN run_scorers rs ON rs.run_id = j.run_id AND rs.scorer_id = a.scorer_id
           JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx
         WHERE j.run_id = ? AND a.seq > ? AND a.seq <= ?`,
      ),
      // Through the run's jobs and the unique (job, vignette) key, then the scores' primary key:
      // a range of vignettes costs what its own records hold, whatever the run's size.
      matrixPage: db.prepare<
        [{ runId: string; scorerId: number; lo: number; hi: number }],
        { model: string; epoch: number; vignette_idx: number; judge: number; value: number; passed: number | null }
      >(
        `SELECT j.model, j.epoch, s.vignette_idx, sc.judge, sc.value, sc.passed
         FROM jobs j CROSS JOIN responses s ON s.job_id = j.id AND s.vignette_idx BETWEEN @lo AND @hi
           CROSS JOIN scores sc ON sc.scorer_id = @scorerId AND sc.seq = s.seq
         WHERE j.run_id = @runId AND sc.failed = 0`,
      ),
      vignetteHeads: db.prepare<[string, number, number], { idx: number; vignette_id: string; metadata: string | null }>(
        `SELECT idx, vignette_id, metadata FROM vignettes WHERE run_id = ? AND idx BETWEEN ? AND ? ORDER BY idx`,
      ),
      vignetteById: db.prepare<[string, string], { vignette_id: string; prompt: string; system: string | null; target: string | null; metadata: string | null }>(
        `SELECT vignette_id, prompt, system, target, metadata FROM vignettes WHERE run_id = ? AND vignette_id = ?`,
      ),
      recordScores: db.prepare<
        [{ runId: string; seq: number }],
        { name: string; version: string; judges: string; judge: number; value: number; passed: number | null; severity: number; explanation: string | null }
      >(
        `SELECT scr.name, scr.version, scr.judges, sc.judge, sc.value, sc.passed, sc.severity, sc.explanation
         FROM run_scorers rs JOIN scorers scr ON scr.id = rs.scorer_id
           CROSS JOIN scores sc ON sc.scorer_id = rs.scorer_id AND sc.seq = @seq
         WHERE rs.run_id = @runId AND sc.failed = 0 ORDER BY rs.position, sc.judge`,
      ),
    };
  }

  /** Stores a scorer version once (by its hash) and returns its id. */
  putScorer(s: NewScorerVersion): number {
    this.stmt.insertScorer.run(s.version, s.name, s.kind, s.layer, JSON.stringify(s.judges), JSON.stringify(s.definition));
    return this.stmt.scorerId.get(s.version)!.id;
  }

  /**
   * Attaches scorer versions to a run, in order (an already attached version is left as it is, so
   * re-scoring with an unchanged scorer is a no-op), and gives records that failed to score another
   * chance: their failed rows go and the cursor steps back to just before the first.
   */
  attach(runId: RunId, scorers: readonly NewScorerVersion[]): RunScorer[] {
    return this.db
      .transaction(() =>
        scorers.map((s) => {
          const id = this.putScorer(s);
          this.stmt.attach.run(runId, id, runId);
          const current = toRunScorer(this.stmt.runScorer.get(runId, id)!);
          if (current.failed > 0) {
            const { lo, hi } = this.seqRange(runId);
            const first = this.stmt.firstFailed.get(id, runId, lo, hi)?.seq;
            if (first !== null && first !== undefined) {
              this.stmt.deleteFailed.run(id, lo, hi, runId);
              this.stmt.rewind.run(Math.min(current.scoredSeq, first - 1), runId, id);
            }
          }
          return toRunScorer(this.stmt.runScorer.get(runId, id)!);
        }),
      )
      .immediate();
  }

  runScorers(runId: RunId): RunScorer[] {
    return this.stmt.runScorers.all(runId).map(toRunScorer);
  }

  runScorer(runId: RunId, scorerId: number): RunScorer | null {
    const row = this.stmt.runScorer.get(runId, scorerId);
    return row ? toRunScorer(row) : null;
  }

  /** (run, scorer) pairs whose run has records the scorer has not reached yet. */
  behind(): RunScorer[] {
    return this.stmt.behind.all().map(toRunScorer);
  }

  /** The run's last landed record's seq (0 when none). */
  lastSeq(runId: RunId): number {
    return this.stmt.lastSeq.get(runId)?.hi ?? 0;
  }

  /**
   * Takes the lease on a (run, scorer) for `owner`: free, already ours, lapsed, or held by a
   * process on this host that is dead (a kill -9 leaves its lease; the next start takes it at once).
   */
  claim(runId: RunId, scorerId: number, owner: string, leaseMs: number): boolean {
    const now = Date.now();
    const current = this.stmt.guard.get(runId, scorerId);
    if (!current) return false;
    const dead = current.owner !== null && current.owner !== owner && ownerIsDeadLocally(current.owner) ? current.owner : null;
    return (
      this.db
        .transaction(() => this.stmt.claim.run({ owner, until: now + leaseMs, runId, scorerId, now, dead }))
        .immediate().changes === 1
    );
  }

  release(runId: RunId, scorerId: number, owner: string): void {
    this.stmt.release.run(runId, scorerId, owner);
  }

  /** Up to `limit` of the run's records with afterSeq < seq <= throughSeq, in seq order. */
  /**
   * The records in (afterSeq, throughSeq] this scorer version has a score for: after a second chance
   * rewinds the cursor to a record that failed, those already scored are not scored or counted again.
   */
  scoredIn(scorerId: number, afterSeq: number, throughSeq: number): Set<number> {
    return new Set(this.stmt.scoredIn.all(scorerId, afterSeq, throughSeq));
  }

  recordsToScore(runId: RunId, afterSeq: number, throughSeq: number, limit: number): RecordToScore[] {
    // Many vignettes share one metadata text (a topic, a split): parse each distinct text once a page.
    const metadata = new Map<string, Record<string, unknown>>();
    return this.stmt.recordsPage.all(runId, afterSeq, throughSeq, limit).map(([seq, response, vignetteIdx, model, epoch, id, prompt, system, target, meta]) => {
      const vignette: StoredVignetteForScoring = { id, prompt };
      if (system !== null) vignette.system = system;
      if (target !== null) vignette.target = target;
      if (meta !== null) {
        let parsed = metadata.get(meta);
        if (!parsed) metadata.set(meta, (parsed = JSON.parse(meta) as Record<string, unknown>));
        vignette.metadata = parsed;
      }
      return { seq, response, vignetteIdx, model, epoch, vignette };
    });
  }

  /**
   * Writes a page's scores and moves the cursor past it, in one transaction, if `owner` still holds
   * the lease (else nothing, and false). A score already there is kept. Without an fsync of its
   * own: in WAL mode the commit survives a kill -9, and the next synchronous commit syncs it.
   */
  commitScores(
    runId: RunId,
    scorerId: number,
    owner: string,
    page: {
      scores: readonly NewScore[];
      throughSeq: number;
      done: number;
      failed: number;
      leaseMs: number;
      /** Other writes that must land with this page or not at all (a retry's attempts), run after the lease check. */
      alongside?: () => void;
    },
  ): boolean {
    return this.store.withoutSync(() =>
      this.db
        .transaction(() => {
          if (this.stmt.guard.get(runId, scorerId)?.owner !== owner) return false;
          const usage = new Map<string, JudgeUsage>();
          for (const s of page.scores) {
            const inserted = this.stmt.insertScore.run(
              scorerId,
              s.seq,
              s.judge,
              s.value,
              s.passed === null ? null : s.passed ? 1 : 0,
              SEVERITY_CODE[s.severity],
              s.explanation === '' ? null : s.explanation,
              s.failed ? 1 : 0,
            ).changes;
            // Only a score stored now counts its calls: a verdict already stored was paid for once.
            if (inserted > 0 && s.usage) addUsage(usage, s.usage);
          }
          for (const u of usage.values()) this.stmt.addJudgeUsage.run({ runId, scorerId, ...u });
          page.alongside?.();
          this.stmt.advance.run({ through: page.throughSeq, done: page.done, failed: page.failed, until: Date.now() + page.leaseMs, runId, scorerId });
          return true;
        })
        .immediate(),
    );
  }

  /** Adds a judge's calls to the run's judge usage: for verdicts stored beside scores, in their transaction. */
  addJudgeUsage(runId: RunId, scorerId: number, usage: JudgeUsage): void {
    this.stmt.addJudgeUsage.run({ runId, scorerId, ...usage });
  }

  /** The judges' usage on a run, per judge model, over every scorer version. */
  judgeUsage(runId: RunId): ModelUsage[] {
    return this.stmt.judgeUsage.all(runId);
  }

  private seqRange(runId: RunId): { lo: number; hi: number } {
    const r = this.stmt.runSeqRange.get(runId);
    return r && r.lo !== null && r.hi !== null ? { lo: r.lo, hi: r.hi } : { lo: 1, hi: 0 };
  }

  /**
   * A scorer's scores on a run, in seq order, a page at a time (no statement stays open between
   * pages, so writes in between find the connection free). Records that could not be scored are
   * left out. `attempt` 'final' reads each record's last scored retry in place of the record's own.
   */
  *cells(
    runId: RunId,
    scorerId: number,
    by: string | null = null,
    attempt: ReportAttempt = 'first',
    pageSize = 5000,
  ): Generator<StoredScoreCell[], void, undefined> {
    const { lo, hi } = this.seqRange(runId);
    const path = by === null ? null : `$.${JSON.stringify(by)}`;
    const page = attempt === 'final' ? this.stmt.finalCellsPage : this.stmt.cellsPage;
    for (let cursor = lo - 1; cursor < hi; ) {
      const { rows, more } = wholeRecords(page.all(path, scorerId, cursor, hi, runId, pageSize), pageSize);
      if (rows.length > 0) yield rows.map(toCell);
      if (!more) return;
      cursor = rows[rows.length - 1]!.seq;
    }
  }

  /** Every verdict of a scorer on the vignettes with index lo..hi, in no particular order. Failed attempts are left out. */
  matrixScores(runId: RunId, scorerId: number, lo: number, hi: number): MatrixScore[] {
    return this.stmt.matrixPage.all({ runId, scorerId, lo, hi }).map((r) => ({
      model: r.model,
      epoch: r.epoch,
      vignetteIdx: r.vignette_idx,
      judge: r.judge,
      value: r.value,
      passed: r.passed === null ? null : r.passed === 1,
    }));
  }

  /** The ids and metadata of the vignettes with index lo..hi, in index order. */
  vignetteHeads(runId: RunId, lo: number, hi: number): VignetteHead[] {
    return this.stmt.vignetteHeads.all(runId, lo, hi).map((r) => ({
      idx: r.idx,
      id: r.vignette_id,
      ...(r.metadata === null ? {} : { metadata: JSON.parse(r.metadata) as Record<string, unknown> }),
    }));
  }

  /** A vignette of the run, by id, as scorers see it; null when the run has no such vignette. */
  vignetteById(runId: RunId, vignetteId: string): StoredVignetteForScoring | null {
    const r = this.stmt.vignetteById.get(runId, vignetteId);
    if (!r) return null;
    const v: StoredVignetteForScoring = { id: r.vignette_id, prompt: r.prompt };
    if (r.system !== null) v.system = r.system;
    if (r.target !== null) v.target = r.target;
    if (r.metadata !== null) v.metadata = JSON.parse(r.metadata) as Record<string, unknown>;
    return v;
  }

  /** Every score one record got, from every scorer version attached to its run; failed attempts left out. */
  recordScores(runId: RunId, seq: number): RecordScore[] {
    return this.stmt.recordScores.all({ runId, seq }).map((r) => ({
      scorerName: r.name,
      version: r.version,
      judge: (JSON.parse(r.judges) as string[])[r.judge] ?? null,
      value: r.value,
      passed: r.passed === null ? null : r.passed === 1,
      severity: SEVERITY_NAME[r.severity] ?? 'none',
      explanation: r.explanation ?? '',
    }));
  }

  /** Every score of a run, every scorer and attempt, in seq order: what `export --scores` writes. */
  *lines(runId: RunId, pageSize = 2000): Generator<ScoreLine, void, undefined> {
    const { lo, hi } = this.seqRange(runId);
    for (let cursor = lo - 1; cursor < hi; ) {
      const { rows: own, more } = wholeRecords(this.stmt.linesPage.all(runId, cursor, hi, pageSize), pageSize);
      // A page holds whole records, so their retries are those with seq up to its last.
      const retries = own.length === 0 ? [] : this.stmt.attemptLines.all(runId, cursor, own[own.length - 1]!.seq);
      const rows = retries.length === 0 ? own : [...own, ...retries].sort(lineOrder);
      for (const r of rows) {
        yield {
          attempt: r.attempt,
          seq: r.seq,
          model: r.model,
          epoch: r.epoch,
          vignetteIdx: r.vignette_idx,
          vignetteId: r.vignette_id,
          judge: r.judge,
          value: r.value,
          passed: r.passed === null ? null : r.passed === 1,
          scorerName: r.name,
          version: r.version,
          judges: JSON.parse(r.judges) as string[],
          severity: SEVERITY_NAME[r.severity] ?? 'none',
          explanation: r.explanation ?? '',
        };
      }
      if (!more) return;
      cursor = own[own.length - 1]!.seq;
    }
  }
}
