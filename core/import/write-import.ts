/**
 * Writes an import's output folder all at once or not at all: everything goes to a temporary
 * folder beside the destination, each manifest line checked by the manifest's own parser (so the
 * result is a manifest `panoptes run` accepts) and ids checked for duplicates, and the folder is
 * renamed into place only when the whole source was read. A failure removes the temporary folder
 * and leaves the destination as it was.
 * Runs on: Node (core).
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import { PanoptesError } from '../domain.js';
import { parseManifestLine } from '../manifest.js';
import { ScoringConfigSchema } from '../scoring/scoring-config.js';
import { formatZodIssues } from '../validation.js';
import type { FidelityNote, ImportOutcome, VignetteSink } from './imported-suite.js';

export interface ImportSummary {
  outDir: string;
  vignettes: number;
  scorers: number;
  notes: FidelityNote[];
  models: NonNullable<ImportOutcome['models']>;
}

/** Lines written between turns of the event loop, so a million-row table never holds it. */
const LINES_PER_TURN = 500;

async function refuseNonEmpty(outDir: string): Promise<boolean> {
  try {
    const entries = await readdir(outDir);
    if (entries.length > 0) throw new PanoptesError('conflict', `${outDir} exists and is not empty; give a new folder to --out`, { where: outDir });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    if ((err as NodeJS.ErrnoException).code === 'ENOTDIR') throw new PanoptesError('conflict', `${outDir} is a file; give a folder to --out`, { where: outDir });
    throw err;
  }
}

function write(stream: WriteStream, text: string): Promise<void> {
  return stream.write(text) ? Promise.resolve() : new Promise((ok) => stream.once('drain', ok));
}

/** `source`: the file imported, named when it yields nothing to import. */
export async function writeImport(out: string, source: string, produce: (sink: VignetteSink) => Promise<ImportOutcome>): Promise<ImportSummary> {
  const outDir = resolve(out);
  const emptyDirThere = await refuseNonEmpty(outDir);
  const temp = await mkdtemp(join(dirname(outDir), `.${basename(outDir)}.importing-`));
  const stream = createWriteStream(join(temp, 'manifest.jsonl'));
  const streamFailed = new Promise<never>((_ok, fail) => stream.once('error', fail));
  streamFailed.catch(() => undefined);
  try {
    const seen = new Map<string, string>();
    let count = 0;
    const sink: VignetteSink = async (vignette, where) => {
      const line = JSON.stringify(vignette);
      const checked = parseManifestLine(line, count + 1);
      if ('message' in checked && !('prompt' in checked)) throw new PanoptesError('invalid_input', `${where}: ${checked.message}`, { where });
      const first = seen.get(vignette.id);
      if (first !== undefined) throw new PanoptesError('invalid_input', `${where}: duplicate id "${vignette.id}" (first at ${first}); give --id a column whose values are unique`, { where });
      seen.set(vignette.id, where);
      count += 1;
      await Promise.race([write(stream, `${line}\n`), streamFailed]);
      if (count % LINES_PER_TURN === 0) await turn();
    };
    const outcome = await produce(sink);
    await Promise.race([new Promise<void>((ok) => stream.end(ok)), streamFailed]);
    if (count === 0) throw new PanoptesError('invalid_input', `${source}: holds no items to import (no test case, sample or row)`, { where: source });
    if (outcome.scorers.length > 0) {
      const parsed = ScoringConfigSchema.safeParse({ scorers: outcome.scorers });
      if (!parsed.success) throw new PanoptesError('internal', `the imported scorers do not validate: ${formatZodIssues(parsed.error)}`, {});
      await writeFile(join(temp, 'scorers.json'), `${JSON.stringify({ scorers: outcome.scorers }, null, 2)}\n`);
    }
    const summary: ImportSummary = { outDir, vignettes: count, scorers: outcome.scorers.length, notes: outcome.notes, models: outcome.models ?? { mapped: [], unmapped: [] } };
    const { outDir: _where, ...report } = summary;
    await writeFile(join(temp, 'import-report.json'), `${JSON.stringify(report, null, 2)}\n`);
    if (emptyDirThere) await rmdir(outDir);
    await rename(temp, outDir);
    return summary;
  } catch (err) {
    stream.destroy();
    await rm(temp, { recursive: true, force: true });
    throw err;
  }
}
