/**
 * `export --format inspect`: a run as inspect_ai EvalLogs (version 2, `.json`), one file per model
 * (in a run of prompt variants, per model and variant) in one folder, grouped by a shared
 * `eval_set_id`, so `inspect view --log-dir DIR` lists them as one eval set. Records are read a
 * page at a time per model (never the whole run in memory) and each
 * log is streamed to a temporary file: its head, the samples, then results and stats once the
 * samples' count and usage are known. Every log is renamed into place only when all were written;
 * on failure the temporary files are removed and nothing is left behind.
 * Runs on: Node (core).
 */
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { replaceAtomically, temporaryPathFor, writeFileAtomicSync } from '../atomic-write.js';
import type { Run } from '../domain.js';
import type { ScoreReport } from '../scoring/report-shape.js';
import { variantOf } from '../scoring/variant-arms.js';
import type { RunQueries } from '../store/run-queries.js';
import type { ScoreStore } from '../store/score-store.js';
import type { VariantReads } from '../store/variant-reads.js';
import type { ExportResult } from './contract.js';
import { addUsage, evalSet, logHead, logTail, toInspectUsage, toSample, type ExportedLog, type ExportedScorer, type InspectUsage, type LogContext } from './inspect-log.js';

/** Records read per page: small enough that a page of long answers is stringified well inside 50 ms. */
const PAGE = 100;

export interface InspectExportDeps {
  queries: Pick<RunQueries, 'responses'>;
  scores: Pick<ScoreStore, 'runScorers' | 'recordScores'>;
  /** Each vignette's prompt variant: a run naming two or more is exported a log per model and variant. */
  variants: Pick<VariantReads, 'of'>;
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
const safeName = (s: string): string => s.replace(/[^A-Za-z0-9._-]+/g, '-');

/** What every log file of the run's export starts with: its creation time and id. */
function runLogPrefix(run: Run): string {
  const when = new Date(run.createdAt).toISOString().replace(/\.\d+Z$/, '+00-00').replace(/:/g, '-');
  return `${when}_${safeName(run.id)}_`;
}

function logFileName(run: Run, log: ExportedLog, sequence: number): string {
  // Two variants may read the same once made safe ("a/b", "a b"): the log's place keeps the names apart.
  const variant = log.variant === null ? '' : `_${safeName(log.variant)}-${sequence}`;
  return `${runLogPrefix(run)}${safeName(log.model)}${variant}.json`;
}

/**
 * The run's logs: one per model; in a run naming two or more prompt variants, one per model and
 * variant (the report's arms), and one per model for the vignettes naming none, if any.
 */
async function logsOf(run: Run, variants: Pick<VariantReads, 'of'>): Promise<ExportedLog[]> {
  const counts = new Map<string, number>();
  let named = 0;
  for (const page of variants.of(run.id)) {
    for (const v of page) counts.set(v.variant, (counts.get(v.variant) ?? 0) + 1);
    named += page.length;
    await yieldToLoop();
  }
  if (counts.size < 2) return run.models.map((model) => ({ model, variant: null, vignettes: run.vignetteCount }));
  return run.models.flatMap((model) => [
    ...(named < run.vignetteCount ? [{ model, variant: null, vignettes: run.vignetteCount - named }] : []),
    ...[...counts].map(([variant, vignettes]) => ({ model, variant, vignettes })),
  ]);
}

/** A log's context, and whether the run is split by variant (else every record of the model is in its log). */
type SplitContext = LogContext & { byVariant: boolean };

export class InspectExport {
  constructor(private readonly deps: InspectExportDeps) {}

  /** Writes one EvalLog per model (or arm) of `run` into `outDir`; `lines` counts the samples written. */
  async write(run: Run, outDir: string): Promise<ExportResult & { files: string[] }> {
    const dir = resolve(outDir);
    const scorers = await this.scorers(run);
    const logs = await logsOf(run, this.deps.variants);
    const ctx: LogContext = { run, evalSetId: `panoptes-${run.id}`, panoptesVersion: this.deps.panoptesVersion };
    const split: SplitContext = { ...ctx, byVariant: logs.some((l) => l.variant !== null) };
    await mkdir(dir, { recursive: true });
    const written: { tmp: string; path: string }[] = [];
    let samples = 0;
    try {
      for (const [sequence, log] of logs.entries()) {
        const path = join(dir, logFileName(run, log, sequence));
        const tmp = temporaryPathFor(path);
        written.push({ tmp, path });
        samples += await this.writeLog(split, log, scorers, tmp);
      }
    } catch (err) {
      await Promise.all(written.map((w) => rm(w.tmp, { force: true })));
      throw err;
    }
    for (const w of written) await replaceAtomically(w.tmp, w.path);
    // An earlier export of this run into the folder may have written logs this one does not (before
    // its variants were split, say): inspect would list both. Other runs' logs are left alone.
    const now = new Set(written.map((w) => basename(w.path)));
    for (const f of await readdir(dir)) if (f.startsWith(runLogPrefix(run)) && f.endsWith('.json') && !now.has(f)) await rm(join(dir, f), { force: true });
    writeFileAtomicSync(join(dir, 'eval-set.json'), JSON.stringify(evalSet(ctx, logs)) + '\n');
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

  private async writeLog(ctx: SplitContext, log: ExportedLog, scorers: readonly ExportedScorer[], path: string): Promise<number> {
    const counted = { samples: 0 };
    await pipeline(Readable.from(this.logText(ctx, log, scorers, counted)), createWriteStream(path));
    return counted.samples;
  }

  /** One log as text, piece by piece: the head, each sample of its model (and variant), then results and stats. */
  private async *logText(ctx: SplitContext, log: ExportedLog, scorers: readonly ExportedScorer[], counted: { samples: number }): AsyncGenerator<string> {
    const head = JSON.stringify(logHead(ctx, log, scorers));
    yield `${head.slice(0, -1)},"samples":[`;
    const usage: InspectUsage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    for (let cursor: number | null = 0; cursor !== null; ) {
      const page = this.deps.queries.responses(ctx.run.id, { model: log.model }, { limit: this.deps.pageSize ?? PAGE, cursor });
      for (const r of page.items) {
        if (ctx.byVariant && variantOf(r.metadata) !== log.variant) continue;
        const own = scorers.length > 0 ? this.deps.scores.recordScores(ctx.run.id, r.seq) : [];
        addUsage(usage, toInspectUsage(r.usage));
        yield (counted.samples > 0 ? ',' : '') + JSON.stringify(toSample(r, own, scorers));
        counted.samples += 1;
      }
      cursor = page.nextCursor;
      await yieldToLoop();
    }
    const tail = logTail(ctx, log, scorers, counted.samples, usage);
    yield `],"results":${JSON.stringify(tail.results)},"stats":${JSON.stringify(tail.stats)}}\n`;
  }
}
