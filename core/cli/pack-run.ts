/**
 * What `panoptes pack` runs: reads the source, fits the pack to the models' smallest window, writes
 * the manifest whole (a temporary file renamed into place, so a refused or failed pack leaves no
 * half a manifest) and prints one line per vignette with its coverage.
 * Runs on: Node (core).
 */
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { replaceAtomically, temporaryPathFor } from '../atomic-write.js';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../models/catalog.js';
import { packRepository } from '../ingest/pack.js';
import { readSource, smallestWindow } from '../ingest/pack-source.js';
import { DEFAULT_MAX_BYTES } from '../ingest/repo-files.js';
import { parseSplit } from '../ingest/split.js';
import { loadCatalog } from '../service/load-catalog.js';
import { formatInt } from './common.js';

export interface PackRunOptions {
  dataDir: string;
  catalog?: string[];
  models: string;
  out: string;
  prompt?: string;
  diff?: string;
  split?: string;
  maxBytes?: number;
  answerTokens?: number;
}

async function instructionOf(prompt: string | undefined): Promise<string | undefined> {
  if (prompt === undefined) return undefined;
  return existsSync(prompt) ? readFile(prompt, 'utf8') : prompt;
}

export async function runPack(source: string, opts: PackRunOptions): Promise<void> {
  const models = opts.models.split(',').map((m) => m.trim()).filter(Boolean);
  const window = smallestWindow(loadCatalog(opts.dataDir, opts.catalog ?? []), models);
  const split = opts.split === undefined ? undefined : parseSplit(opts.split);
  const instruction = await instructionOf(opts.prompt);
  const repo = await readSource(source, { diff: opts.diff, maxBytes: opts.maxBytes ?? DEFAULT_MAX_BYTES });
  const answerTokens = opts.answerTokens ?? Math.min(DEFAULT_MAX_OUTPUT_TOKENS, Math.floor(window / 4));
  const vignettes = await packRepository(repo, { instruction, models, window, answerTokens, split });
  const tmp = temporaryPathFor(opts.out);
  try {
    await writeFile(tmp, vignettes.map((v) => JSON.stringify(v) + '\n').join(''));
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await replaceAtomically(tmp, opts.out);
  for (const v of vignettes) {
    const c = v.metadata.coverage;
    process.stdout.write(
      `${v.id}: ${formatInt(c.files)} of ${formatInt(c.totalFiles)} files, ${(c.ratio * 100).toFixed(1)}% of the characters, ~${formatInt(v.metadata.fit.promptTokens)} tokens (window ${formatInt(window)}, ${formatInt(answerTokens)} kept for the answer)${v.metadata.dropped.length ? `; dropped ${v.metadata.dropped.length}` : ''}\n`,
    );
  }
  process.stdout.write(`wrote ${vignettes.length} vignette${vignettes.length === 1 ? '' : 's'} to ${opts.out}\n`);
}
