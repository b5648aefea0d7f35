/**
 * The scoring tables' prepared statements, on the Store's connection: scorer versions, run scorers
 * with their cursor and lease, scores and judge usage, and the pages that reports, the matrix,
 * record details and exports read. `ScoreStore` runs them; the rows they return are typed here.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import type { ModelUsage, ReportAttempt, ScorerKind, ScorerLayer } from '../domain.js';

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
  messages: string | null,
  target: string | null,
  metadata: string | null,
];

export interface RunScorerRow {
  run_id: string;
  scorer_id: number;
  version: string;
  name: string;
  kind: ScorerKind;
  layer: ScorerLayer;
  judges: string;
  definition: string;
  position: number;
  scored_seq: number;
  done_count: number;
  failed_count: number;
  owner: string | null;
  lease_until: number | null;
  stopped_reason: string | null;
  last_error: string | null;
  /** NULL before the first verdict, 1 while every verdict is a boolean, 0 after one is not. */
  verdicts_boolean: number | null;
}

export interface CellRow {
  seq: number;
  model: string;
  epoch: number;
  vignette_idx: number;
  vignette_id: string;
  judge: number;
  value: number;
  passed: number | null;
  grp?: string | number | null;
  /** scores.failed: 0 a verdict, 1 the record could not be scored, 2 the judge gave no verdict. */
  failed: number;
}

export interface LineRow extends Omit<CellRow, 'failed'> {
  name: string;
  version: string;
  judges: string;
  severity: number;
  explanation: string | null;
  position: number;
  attempt: number;
}

const RUN_SCORER_COLUMNS = `rs.run_id, rs.scorer_id, sc.version, sc.name, sc.kind, sc.layer, sc.judges, sc.definition,
  rs.position, rs.scored_seq, rs.done_count, rs.failed_count, rs.owner, rs.lease_until, sc.stopped_reason, rs.last_error, rs.verdicts_boolean`;

export type { ReportAttempt };

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
            json_extract(v.metadata, ?) AS grp, sc.failed
     FROM scores sc CROSS JOIN responses s ON s.seq = sc.seq CROSS JOIN jobs j ON j.id = s.job_id
       JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx
       ${
         final
           ? `LEFT JOIN attempt_scores a ON a.scorer_id = sc.scorer_id AND a.seq = sc.seq AND a.judge = sc.judge
                AND a.attempt = (SELECT MAX(m.attempt) FROM attempt_scores m WHERE m.scorer_id = sc.scorer_id AND m.seq = sc.seq)`
           : ''
       }
     WHERE sc.scorer_id = ? AND sc.seq > ? AND sc.seq <= ? AND j.run_id = ?
     ORDER BY sc.seq, sc.judge LIMIT ?`;
}

/** Prepares every statement of the scoring tables once, on `db`. */
export function prepareScoreStatements(db: Database.Database) {
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
    // Behind: the run has records past the cursor (a stopped scorer version is never behind).
    behind: db.prepare<[], RunScorerRow>(
      `SELECT ${RUN_SCORER_COLUMNS} FROM run_scorers rs JOIN scorers sc ON sc.id = rs.scorer_id
       WHERE sc.stopped_reason IS NULL AND rs.scored_seq < (SELECT COALESCE(MAX(last_seq), 0) FROM jobs WHERE run_id = rs.run_id)
       ORDER BY rs.run_id, rs.position`,
    ),
    claim: db.prepare(
      `UPDATE run_scorers SET owner = @owner, lease_until = @until
       WHERE run_id = @runId AND scorer_id = @scorerId
         AND (owner IS NULL OR owner = @owner OR lease_until < @now OR owner = @dead)`,
    ),
    renew: db.prepare(`UPDATE run_scorers SET lease_until = @until WHERE run_id = @runId AND scorer_id = @scorerId AND owner = @owner`),
    stopScorer: db.prepare(`UPDATE scorers SET stopped_reason = ? WHERE id = ? AND stopped_reason IS NULL`),
    release: db.prepare(`UPDATE run_scorers SET owner = NULL, lease_until = NULL WHERE run_id = ? AND scorer_id = ? AND owner = ?`),
    guard: db.prepare<[string, number], { owner: string | null }>(`SELECT owner FROM run_scorers WHERE run_id = ? AND scorer_id = ?`),
    // Each record with its vignette, in one query: a page reads no other table row by row.
    recordsPage: db
      .prepare<[string, number, number, number], RecordRow>(
        `SELECT s.seq, s.response, s.vignette_idx, j.model, j.epoch, v.vignette_id, v.prompt, v.system, v.messages, v.target, v.metadata
         FROM responses s CROSS JOIN jobs j ON j.id = s.job_id
         JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx
         WHERE j.run_id = ? AND s.seq > ? AND s.seq <= ? ORDER BY s.seq LIMIT ?`,
      )
      .raw(true),
    insertScore: db.prepare(
      `INSERT INTO scores (scorer_id, seq, judge, value, passed, severity, explanation, failed)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (scorer_id, seq, judge) DO NOTHING`,
    ),
    judgeUsage: db.prepare<[string], ModelUsage>(
      `SELECT judge AS model, SUM(calls) AS calls, SUM(input_tokens) AS inputTokens, SUM(output_tokens) AS outputTokens,
         SUM(cached_calls) AS cachedCalls, SUM(cached_input_tokens) AS cachedInputTokens, SUM(cached_output_tokens) AS cachedOutputTokens
       FROM judge_usage WHERE run_id = ? GROUP BY judge HAVING SUM(calls) > 0 ORDER BY judge`,
    ),
    // @boolean: NULL for a page without verdicts, else 1 when all of its verdicts are booleans.
    advance: db.prepare(
      `UPDATE run_scorers SET scored_seq = MAX(scored_seq, @through), done_count = done_count + @done,
         failed_count = failed_count + @failed, lease_until = @until, last_error = COALESCE(@lastError, last_error),
         verdicts_boolean = IIF(@boolean IS NULL, verdicts_boolean, MIN(COALESCE(verdicts_boolean, 1), @boolean))
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
      `UPDATE run_scorers SET scored_seq = ?, failed_count = 0, last_error = NULL WHERE run_id = ? AND scorer_id = ?`,
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
    // A target of nothing but whitespace: what `includes`, `match` and `choice` would find in every answer.
    firstEmptyTarget: db.prepare<[string], { idx: number; vignette_id: string }>(
      `SELECT idx, vignette_id FROM vignettes WHERE run_id = ? AND target IS NOT NULL AND trim(target, ' ' || char(9, 10, 11, 12, 13)) = '' ORDER BY idx LIMIT 1`,
    ),
    vignetteById: db.prepare<[string, string], { vignette_id: string; prompt: string; system: string | null; messages: string | null; target: string | null; metadata: string | null }>(
      `SELECT vignette_id, prompt, system, messages, target, metadata FROM vignettes WHERE run_id = ? AND vignette_id = ?`,
    ),
    recordScores: db.prepare<
      [{ runId: string; seq: number }],
      { name: string; version: string; judges: string; judge: number; value: number; passed: number | null; severity: number; explanation: string | null }
    >(
      `SELECT scr.name, scr.version, scr.judges, sc.judge, sc.value, sc.passed, sc.severity, sc.explanation
       FROM run_scorers rs JOIN scorers scr ON scr.id = rs.scorer_id
         CROSS JOIN scores sc ON sc.scorer_id = rs.scorer_id AND sc.seq = @seq
       WHERE rs.run_id = @runId AND sc.failed <> 1 ORDER BY rs.position, sc.judge`,
    ),
  };
}

export type ScoreStatements = ReturnType<typeof prepareScoreStatements>;
