/**
 * A run's export: its records (JSONL or CSV) or its scores (JSONL), read from the store line by
 * line, and written to a file atomically and durably (`core/atomic-write.ts`: a temporary file
 * fsynced and renamed into place, removed on failure). The contract's `exportRun` writes through it; the HTTP API and the browser bridge
 * stream its lines to the client instead.
 * Runs on: Node (core).
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { replaceAtomically, temporaryPathFor } from '../atomic-write.js';
import type { RunId, StoredResponse } from '../domain.js';
import { csvHeader, toCsvLine, toJsonlLine } from '../export.js';
import { toScoreJsonlLine } from '../scoring/score-export.js';
import type { ScoreStore } from '../store/score-store.js';
import type { RunQueries } from '../store/run-queries.js';
import type { ExportResult } from './contract.js';

export type ExportKind = 'jsonl' | 'csv' | 'scores';

/** A run's pricer: what each of its records was billed (0 for a cached answer). */
export type RecordPricer = (runId: RunId) => (r: StoredResponse) => number;

export class RunExports {
  constructor(
    private readonly queries: Pick<RunQueries, 'iterateResponses'>,
    private readonly scores: Pick<ScoreStore, 'lines'>,
    private readonly pricer: RecordPricer,
  ) {}

  /** A run's export, line by line (each with its newline), streamed from the store; CSV without its header. */
  *lines(runId: RunId, kind: ExportKind): Generator<string> {
    if (kind === 'scores') {
      for (const s of this.scores.lines(runId)) yield toScoreJsonlLine(s) + '\n';
      return;
    }
    if (kind === 'csv') {
      const costOf = this.pricer(runId);
      for (const r of this.queries.iterateResponses(runId)) yield toCsvLine(r, costOf(r)) + '\n';
      return;
    }
    for (const r of this.queries.iterateResponses(runId)) yield toJsonlLine(r) + '\n';
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
    if (kind === 'csv') out.write(csvHeader() + '\n');
    for (const line of this.lines(runId, kind)) {
      lines += 1;
      if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
    }
    out.end();
    await done;
    return lines;
  }
}
