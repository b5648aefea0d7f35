/**
 * A run's export: its records (JSONL or CSV; asked for, each JSONL record with a `scores` object
 * and the CSV with a column per scorer) or its scores (JSONL, a line per verdict), read from the
 * store line by line (records a page of 500 at a time with their score cells) (a CSV's header first), and written to a file atomically and durably (`core/atomic-write.ts`: a temporary file
 * fsynced and renamed into place, removed on failure). The contract's `exportRun` writes through it; the HTTP API and the browser bridge
 * stream its lines to the client instead.
 * Runs on: Node (core).
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { replaceAtomically, temporaryPathFor } from '../atomic-write.js';
import type { RunId, StoredResponse } from '../domain.js';
import { csvHeader, toCsvLine, toJsonlLine, toScoredJsonlLine, type JsonlScore } from '../export.js';
import { toScoreJsonlLine } from '../scoring/score-export.js';
import type { ResponseScoreCell } from '../store/response-search.js';
import type { ResponseScores } from '../store/response-scores.js';
import type { RunScorer } from '../store/score-shapes.js';
import type { ScoreStore } from '../store/score-store.js';
import type { RunQueries } from '../store/run-queries.js';
import type { ExportResult } from './contract.js';

/**
 * `csv_scores`: the CSV with a column per scorer attached to the run (pass, fail, a graded value,
 * or empty while unscored); `jsonl_scores`: each JSONL record with a `scores` object keyed the same
 * way; `scores`: one line per record, scorer, attempt and judge.
 */
export type ExportKind = 'jsonl' | 'jsonl_scores' | 'csv' | 'csv_scores' | 'scores';

/** Which export a format and the scores choice ask for (`scores` as a format: the line-per-verdict file). */
export function exportKindOf(format: 'jsonl' | 'csv' | 'scores', scores: boolean): ExportKind {
  if (format === 'scores') return 'scores';
  return scores ? (format === 'csv' ? 'csv_scores' : 'jsonl_scores') : format;
}

/** Records whose score cells are read at once. */
const SCORED_PAGE = 500;

/** A score cell as a spreadsheet reads it. */
function scoreText(cell: ResponseScoreCell | null | undefined): string | number {
  if (!cell) return '';
  return cell.passed === null ? cell.value : cell.passed ? 'pass' : 'fail';
}

/** A JSONL record's `scores`: a key per scorer, its verdict, or null while unscored. */
function jsonlScores(scorers: readonly RunScorer[], names: readonly string[], cells: ReadonlyArray<ResponseScoreCell | null>): Record<string, JsonlScore | null> {
  return Object.fromEntries(
    scorers.map((s, i) => {
      const cell = cells[i];
      return [names[i]!, cell ? { value: cell.value, passed: cell.passed, kind: s.kind, severity: cell.severity } : null];
    }),
  );
}

/** A run's pricer: what each of its records was billed (0 for a cached answer). */
export type RecordPricer = (runId: RunId) => (r: StoredResponse) => number;

export class RunExports {
  constructor(
    private readonly queries: Pick<RunQueries, 'iterateResponses'>,
    private readonly scores: Pick<ScoreStore, 'lines' | 'runScorers'>,
    private readonly pricer: RecordPricer,
    private readonly cells: Pick<ResponseScores, 'of'>,
  ) {}

  /** A run's export, line by line (each with its newline), streamed from the store; a CSV's header first. */
  *lines(runId: RunId, kind: ExportKind): Generator<string> {
    if (kind === 'scores') {
      for (const s of this.scores.lines(runId)) yield toScoreJsonlLine(s) + '\n';
      return;
    }
    if (kind === 'csv_scores' || kind === 'jsonl_scores') {
      yield* this.scored(runId, kind);
      return;
    }
    if (kind === 'csv') {
      const costOf = this.pricer(runId);
      yield csvHeader() + '\n';
      for (const r of this.queries.iterateResponses(runId)) yield toCsvLine(r, costOf(r)) + '\n';
      return;
    }
    for (const r of this.queries.iterateResponses(runId)) yield toJsonlLine(r) + '\n';
  }

  /**
   * The records with their score cells (a CSV column, or a key of a JSONL record's `scores`, per
   * scorer: `NAME`, and a name attached twice also gets its version), read a page of records at a
   * time: memory holds a page, whatever the run's size.
   */
  private *scored(runId: RunId, kind: 'csv_scores' | 'jsonl_scores'): Generator<string> {
    const scorers = this.scores.runScorers(runId);
    const names = scorers.map((s) => (scorers.filter((o) => o.name === s.name).length > 1 ? `${s.name}@${s.version.slice(0, 8)}` : s.name));
    const ids = scorers.map((s) => s.scorerId);
    const costOf = this.pricer(runId);
    const line =
      kind === 'csv_scores'
        ? (r: StoredResponse, cells: ReadonlyArray<ResponseScoreCell | null>) => toCsvLine(r, costOf(r), cells.map(scoreText))
        : (r: StoredResponse, cells: ReadonlyArray<ResponseScoreCell | null>) => toScoredJsonlLine(r, jsonlScores(scorers, names, cells));
    if (kind === 'csv_scores') yield csvHeader(names.map((n) => `score:${n}`)) + '\n';
    let page: StoredResponse[] = [];
    for (const r of this.queries.iterateResponses(runId)) {
      page.push(r);
      if (page.length < SCORED_PAGE) continue;
      yield* this.scoredLines(page, ids, line);
      page = [];
    }
    yield* this.scoredLines(page, ids, line);
  }

  private *scoredLines(
    page: readonly StoredResponse[],
    scorerIds: readonly number[],
    line: (r: StoredResponse, cells: ReadonlyArray<ResponseScoreCell | null>) => string,
  ): Generator<string> {
    const cells = this.cells.of(scorerIds, page.map((r) => r.seq));
    for (const r of page) yield line(r, cells.get(r.seq) ?? []) + '\n';
  }

  /** Writes a run's export to `outPath`, one line per record (CSV after its header); atomic via rename. */
  async write(runId: RunId, kind: ExportKind, outPath: string): Promise<ExportResult> {
    const path = resolve(outPath);
    await mkdir(dirname(path), { recursive: true });
    const tmp = temporaryPathFor(path);
    const lines = await this.writeTo(runId, kind, tmp).catch(async (err: unknown) => {
      await rm(tmp, { force: true });
      throw err;
    });
    await replaceAtomically(tmp, path);
    return { path, lines };
  }

  private async writeTo(runId: RunId, kind: ExportKind, path: string): Promise<number> {
    const out = createWriteStream(path);
    const done = new Promise<void>((res, rej) => {
      out.on('finish', res);
      out.on('error', rej);
    });
    let lines = 0;
    for (const line of this.lines(runId, kind)) {
      lines += 1;
      if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
    }
    out.end();
    await done;
    // A CSV's header is not a record.
    return kind === 'csv' || kind === 'csv_scores' ? lines - 1 : lines;
  }
}
