/**
 * `export --format inspect`: a run as inspect_ai EvalLogs (version 2, `.json`), one file per model
 * in one folder, grouped by a shared `eval_set_id`, so `inspect view --log-dir DIR` lists them as one
 * eval set. Records are read a page at a time per model (never the whole run in memory) and each
 * log is streamed to a temporary file: its head, the samples, then results and stats once the
 * samples' count and usage are known. Every log is renamed into place only when all were written;
 * on failure the temporary files are removed and nothing is left behind.
 * Runs on: Node (core).
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { replaceAtomically, temporaryPathFor, writeFileAtomicSync } from '../atomic-write.js';
import type { Run } from '../domain.js';
import type { ScoreReport } from '../scoring/report-shape.js';
import type { RunQueries } from '../store/run-queries.js';
import type { ScoreStore } from '../store/score-store.js';
import type { ExportResult } from './contract.js';
import { addUsage, evalSet, logHead, logTail, toInspectUsage, toSample, type ExportedScorer, type InspectUsage, type LogContext } from './inspect-log.js';

/** Records read per page: small enough that a page of long answers is stringified well inside 50 ms. */
const PAGE = 100;

export interface InspectExportDeps {
  queries: Pick<RunQueries, 'responses'>;
  scores: Pick<ScoreStore, 'runScorers' | 'recordScores'>;
  /** The run's report for one scorer (its newest version): the metrics of `results.scores`. */
  report(run: Run, scorer: string): Promise<ScoreReport>;
  panoptesVersion: string;
  /** Records read per page (default 100). */
  pageSize?: number;
}

/**
 * A file name inspect's log listing reads: it takes a `.json` file for a log only when its name
 * starts with a timestamp (`YYYY-MM-DDTHH-MM-SS`), then task and id; safe on every file system.
 */
function logFileName(run: Run, model: string): string {
  const when = new Date(run.createdAt).toISOString().replace(/\.\d+Z$/, '+00-00').replace(/:/g, '-');
  const safe = (s: string): string => s.replace(/[^A-Za-z0-9._-]+/g, '-');
  return `${when}_${safe(run.id)}_${safe(model)}.json`;
}

export class InspectExport {
  constructor(private readonly deps: InspectExportDeps) {}

  /** Writes one EvalLog per model of `run` into `outDir`; `lines` counts the samples written. */
  async write(run: Run, outDir: string): Promise<ExportResult & { files: string[] }> {
    const dir = resolve(outDir);
    const scorers = await this.scorers(run);
    const ctx: LogContext = { run, evalSetId: `panoptes-${run.id}`, panoptesVersion: this.deps.panoptesVersion };
    await mkdir(dir, { recursive: true });
    const written: { tmp: string; path: string }[] = [];
    let samples = 0;
    try {
      for (const model of run.models) {
        const path = join(dir, logFileName(run, model));
        const tmp = temporaryPathFor(path);
        written.push({ tmp, path });
        samples += await this.writeLog(ctx, model, scorers, tmp);
      }
    } catch (err) {
      await Promise.all(written.map((w) => rm(w.tmp, { force: true })));
      throw err;
    }
    for (const w of written) await replaceAtomically(w.tmp, w.path);
    writeFileAtomicSync(join(dir, 'eval-set.json'), JSON.stringify(evalSet(ctx)) + '\n');
    return { path: dir, lines: samples, files: written.map((w) => w.path) };
  }

  /** The run's scorers, newest version of each name, with its report. */
  private async scorers(run: Run): Promise<ExportedScorer[]> {
    const newest = new Map<string, string>();
    for (const s of this.deps.scores.runScorers(run.id)) newest.set(s.name, s.version);
    const out: ExportedScorer[] = [];
    for (const [name, version] of newest) out.push({ name, version, report: await this.deps.report(run, name) });
    return out;
  }

  private async writeLog(ctx: LogContext, model: string, scorers: readonly ExportedScorer[], path: string): Promise<number> {
    const counted = { samples: 0 };
    await pipeline(Readable.from(this.logText(ctx, model, scorers, counted)), createWriteStream(path));
    return counted.samples;
  }

  /** One model's log as text, piece by piece: the head, each sample, then results and stats. */
  private async *logText(ctx: LogContext, model: string, scorers: readonly ExportedScorer[], counted: { samples: number }): AsyncGenerator<string> {
    const head = JSON.stringify(logHead(ctx, model, scorers));
    yield `${head.slice(0, -1)},"samples":[`;
    const usage: InspectUsage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    for (let cursor: number | null = 0; cursor !== null; ) {
      const page = this.deps.queries.responses(ctx.run.id, { model }, { limit: this.deps.pageSize ?? PAGE, cursor });
      for (const r of page.items) {
        const own = scorers.length > 0 ? this.deps.scores.recordScores(ctx.run.id, r.seq) : [];
        addUsage(usage, toInspectUsage(r.usage));
        yield (counted.samples > 0 ? ',' : '') + JSON.stringify(toSample(r, own, scorers));
        counted.samples += 1;
      }
      cursor = page.nextCursor;
      await yieldToLoop();
    }
    const tail = logTail(ctx, model, scorers, counted.samples, usage);
    yield `],"results":${JSON.stringify(tail.results)},"stats":${JSON.stringify(tail.stats)}}\n`;
  }
}
