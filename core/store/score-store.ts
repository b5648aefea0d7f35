/**
 * Scoring's SQL, on the Store's own better-sqlite3 connection: scorer versions, the scorers
 * attached to each run with their durable cursor and lease, and the scores. Exactly once per
 * (record, scorer version, judge) holds by the scores' primary key and by the cursor committing in
 * the same transaction as the scores it covers; the lease keeps a second process from scoring the
 * same (run, scorer) and so from paying for a judge call twice.
 * The statements themselves, and the rows they return, are in `score-statements.ts`.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import type { ChatTurn, ModelUsage, RunId } from '../domain.js';
import { BaselineReads } from './baseline-reads.js';
import { VariantReads } from './variant-reads.js';
import { ownerIsDeadLocally } from './owner-liveness.js';
import type { Store } from './store.js';
import { type CellRow, type LineRow, prepareScoreStatements, type ReportAttempt, type RunScorerRow, type ScoreStatements } from './score-statements.js';

export type { ReportAttempt } from './score-statements.js';

export { SEVERITY_CODE, SEVERITY_NAME } from './score-shapes.js';
export type { NewScorerVersion, RunScorer, RecordToScore, StoredVignetteForScoring, NewScore, StoredScoreCell, ScoreLine, MatrixScore, VignetteHead, RecordScore } from './score-shapes.js';
import { isBooleanVerdict, SEVERITY_CODE, SEVERITY_NAME, type NewScorerVersion, type RunScorer, type RecordToScore, type StoredVignetteForScoring, type NewScore, type StoredScoreCell, type ScoreLine, type MatrixScore, type VignetteHead, type RecordScore } from './score-shapes.js';

function lineOrder(a: LineRow, b: LineRow): number {
  return a.seq - b.seq || a.position - b.position || a.attempt - b.attempt || a.judge - b.judge;
}

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
    stopped: r.stopped_reason,
    lastError: r.last_error,
    verdictsBoolean: r.verdicts_boolean === null ? null : r.verdicts_boolean === 1,
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
    missing: r.failed !== 0,
  };
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

/** scores.failed: 0 a verdict; FAILED_RECORD the scorer could not score the record (retried on re-scoring); NO_VERDICT a judge answered with none. */
const FAILED_RECORD = 1;
const NO_VERDICT = 2;

export class ScoreStore {
  private readonly db: Database.Database;
  private readonly stmt: ScoreStatements;
  /** A pairwise judge's baseline answers, read beside a page of records. */
  readonly baselines: BaselineReads;
  /** Each vignette's prompt variant and item, for reports that compare variants. */
  readonly variants: VariantReads;

  constructor(private readonly store: Store) {
    this.db = store.db;
    this.stmt = prepareScoreStatements(store.db);
    this.baselines = new BaselineReads(store.db);
    this.variants = new VariantReads(store.db);
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
    return this.store.queries.lastRecordSeq(runId);
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

  /** Extends `owner`'s lease on a (run, scorer) from now; false when it is not `owner`'s any more. */
  renew(runId: RunId, scorerId: number, owner: string, leaseMs: number): boolean {
    return this.stmt.renew.run({ until: Date.now() + leaseMs, runId, scorerId, owner }).changes === 1;
  }

  /** Stops a scorer version for good, in every run it is attached to: it is never behind again. */
  stopScorer(scorerId: number, reason: string): void {
    this.stmt.stopScorer.run(reason, scorerId);
  }

  release(runId: RunId, scorerId: number, owner: string): void {
    this.stmt.release.run(runId, scorerId, owner);
  }

  /**
   * The records in (afterSeq, throughSeq] this scorer version has a score for: after a second chance
   * rewinds the cursor to a record that failed, those already scored are not scored or counted again.
   */
  scoredIn(scorerId: number, afterSeq: number, throughSeq: number): Set<number> {
    return new Set(this.stmt.scoredIn.all(scorerId, afterSeq, throughSeq));
  }

  /** Up to `limit` of the run's records with afterSeq < seq <= throughSeq, in seq order. */
  recordsToScore(runId: RunId, afterSeq: number, throughSeq: number, limit: number): RecordToScore[] {
    // Many vignettes share one metadata text (a topic, a split): parse each distinct text once a page.
    const metadata = new Map<string, Record<string, unknown>>();
    return this.stmt.recordsPage.all(runId, afterSeq, throughSeq, limit).map(([seq, response, vignetteIdx, model, epoch, id, prompt, system, messages, target, meta]) => {
      const vignette: StoredVignetteForScoring = { id, prompt };
      if (system !== null) vignette.system = system;
      if (messages !== null) vignette.messages = JSON.parse(messages) as ChatTurn[];
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
      /** Why the page's last record that could not be scored was not. */
      lastError?: string;
      leaseMs: number;
      /** Other writes that must land with this page or not at all (a retry's attempts), run after the lease check. */
      alongside?: () => void;
      /** The verdicts those other writes store (a retry's): they count in whether every verdict is a boolean. */
      alongsideVerdicts?: readonly { value: number; passed: boolean | null }[];
    },
  ): boolean {
    return this.store.withoutSync(() =>
      this.db
        .transaction(() => {
          if (this.stmt.guard.get(runId, scorerId)?.owner !== owner) return false;
          for (const s of page.scores) {
            this.stmt.insertScore.run(
              scorerId,
              s.seq,
              s.judge,
              s.value,
              s.passed === null ? null : s.passed ? 1 : 0,
              SEVERITY_CODE[s.severity],
              s.explanation === '' ? null : s.explanation,
              s.failed ? FAILED_RECORD : s.noVerdict === true ? NO_VERDICT : 0,
            );
          }
          page.alongside?.();
          const lastError = page.lastError ?? null;
          const verdicts = [...page.scores.filter((s) => !s.failed && s.noVerdict !== true), ...(page.alongsideVerdicts ?? [])];
          const boolean = verdicts.length === 0 ? null : verdicts.every(isBooleanVerdict) ? 1 : 0;
          this.stmt.advance.run({ through: page.throughSeq, done: page.done, failed: page.failed, until: Date.now() + page.leaseMs, lastError, boolean, runId, scorerId });
          return true;
        })
        .immediate(),
    );
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
   * pages, so writes in between find the connection free). Records that could not be scored, and
   * judges that gave no verdict, come as `missing` cells (the report counts them as not scored).
   * `attempt` 'final' reads each record's last scored retry in place of the record's own.
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

  /** The run's first vignette (in manifest order) whose target is empty or only whitespace, if any. */
  firstEmptyTarget(runId: RunId): { idx: number; id: string } | null {
    const r = this.stmt.firstEmptyTarget.get(runId);
    return r ? { idx: r.idx, id: r.vignette_id } : null;
  }

  /** A vignette of the run, by id, as scorers see it; null when the run has no such vignette. */
  vignetteById(runId: RunId, vignetteId: string): StoredVignetteForScoring | null {
    const r = this.stmt.vignetteById.get(runId, vignetteId);
    if (!r) return null;
    const v: StoredVignetteForScoring = { id: r.vignette_id, prompt: r.prompt };
    if (r.system !== null) v.system = r.system;
    if (r.messages !== null) v.messages = JSON.parse(r.messages) as ChatTurn[];
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
