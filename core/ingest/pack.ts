/**
 * A repository's files turned into vignettes: each file ranked and counted by the model's own token
 * estimate (the router's, so a pack that fits here is never skipped there for its size), fitted once
 * to the budget of the smallest context window among the chosen models less the room kept for the
 * answer, and, with a split rule, grouped into several vignettes when one does not fit. Every
 * vignette's metadata says how much of the repository it holds (`coverage`) and what it dropped.
 * Runs on: Node (core).
 */
import { setImmediate as turn } from 'node:timers/promises';
import { PanoptesError } from '../domain.js';
import { estimatePromptTokens, estimateTextTokens, withPromptMargin } from '../models/router/token-estimate.js';
import { fitFiles, type SizedFile } from './fit.js';
import { tierOf } from './file-rules.js';
import { fileBlock, fileDelimiter, packHeader, packPrompt, type PromptParts } from './pack-prompt.js';
import { throwIfStopped } from './pack-abort.js';
import type { LeftOutFile, RepoFiles, SourceFile } from './repo-files.js';
import { groupFiles, type SplitRule } from './split.js';

export interface PackOptions {
  /** The instruction put before the files (`--prompt`). */
  instruction?: string | undefined;
  /** The models the pack is for and the smallest context window among their hosts. */
  models: readonly string[];
  window: number;
  /** Tokens kept free for the answer. */
  answerTokens: number;
  split?: SplitRule | undefined;
  /** Stops the pack between steps (the app's Cancel, a time limit). */
  signal?: AbortSignal | undefined;
}

export interface PackCoverage {
  files: number;
  totalFiles: number;
  chars: number;
  totalChars: number;
  /** chars / totalChars, rounded to 4 decimals. */
  ratio: number;
}

export interface PackMetadata {
  source: RepoFiles['kind'];
  repository: string;
  group?: string;
  coverage: PackCoverage;
  /** The files dropped to fit the window, in path order. */
  dropped: string[];
  /** How many files were left out before fitting, per reason (binary, lockfile, ...). */
  leftOut: Record<string, number>;
  fit: { models: string[]; window: number; answerTokens: number; promptTokens: number };
  diff?: { base: string; head: string };
}

export interface PackedVignette {
  id: string;
  prompt: string;
  metadata: PackMetadata;
}

/**
 * Files counted at once by the tokenizer thread, with a turn of the event loop between batches; a
 * batch also stops at `COUNT_BATCH_CHARS`, so the main thread's part (ranking, delimiting, sampling
 * each file) stays short however large the files are.
 */
const COUNT_BATCH = 256;
const COUNT_BATCH_CHARS = 1 << 19;
/** Refits after the whole prompt's count, in case sampling counted the pieces low. */
const MAX_REFITS = 4;

export interface PackFile extends SizedFile {
  block: string;
}

/** Where the batch of files starting at `start` ends: `COUNT_BATCH` files, or past `COUNT_BATCH_CHARS` characters. */
export function batchEnd(files: readonly SourceFile[], start: number): number {
  let end = start + 1;
  for (let chars = files[start]!.text.length; end < files.length && end - start < COUNT_BATCH; end++) {
    chars += files[end]!.text.length;
    if (chars > COUNT_BATCH_CHARS) break;
  }
  return end;
}

/**
 * One batch's step on the main thread: each file ranked and delimited, and the blocks' samples
 * handed to the tokenizer thread; the counts come back later, off the loop. A file decoded in
 * slices is counted as its delimiter line and its slices, so no step reads its block whole.
 */
export function startBatch(files: readonly SourceFile[]): { batch: PackFile[]; counts: Promise<number[]> } {
  const batch = files.map((f) => ({ ...f, tier: tierOf(f.path, f.text), block: fileBlock(f), tokens: 0 }));
  const texts: string[] = [];
  const owners: number[] = [];
  batch.forEach((f, i) => {
    for (const t of f.slices ? [`${fileDelimiter(f.path)}\n`, ...f.slices] : [f.block]) {
      texts.push(t);
      owners.push(i);
    }
  });
  const counts = estimateTextTokens(texts).then((each) => {
    const perFile = batch.map(() => 0);
    each.forEach((n, j) => (perFile[owners[j]!]! += n));
    return perFile;
  });
  return { batch, counts };
}

async function sizeFiles(repo: RepoFiles, signal: AbortSignal | undefined): Promise<PackFile[]> {
  const out: PackFile[] = [];
  for (let i = 0; i < repo.files.length; ) {
    throwIfStopped(signal);
    const end = batchEnd(repo.files, i);
    const { batch, counts } = startBatch(repo.files.slice(i, end));
    i = end;
    const tokens = await counts;
    batch.forEach((f, j) => out.push({ ...f, tokens: tokens[j]! }));
    await turn();
  }
  return out;
}

/** The largest raw token count whose prompt, with the estimate's margin, stays within `budget`. */
function rawBudgetOf(budget: number): number {
  let raw = Math.floor(budget / 1.15);
  while (raw > 0 && withPromptMargin([raw]) > budget) raw--;
  return raw;
}

function countLeftOut(leftOut: readonly LeftOutFile[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const f of leftOut) counts[f.reason] = (counts[f.reason] ?? 0) + 1;
  return counts;
}

const charsOf = (files: readonly { text: string }[]) => files.reduce((n, f) => n + f.text.length, 0);

async function packGroup(repo: RepoFiles, files: PackFile[], opts: PackOptions, label: string | undefined): Promise<PackedVignette> {
  const budget = opts.window - opts.answerTokens;
  const parts = (kept: readonly PackFile[]): PromptParts => ({
    instruction: opts.instruction,
    name: label === undefined ? repo.name : `${repo.name}/${label}`,
    kept: kept.length,
    total: files.length,
    keptChars: charsOf(kept),
    totalChars: charsOf(files),
    diff: repo.diff,
  });
  // The header's worst case (most digits) is counted once: its real text can only be shorter.
  const [overhead] = await estimateTextTokens([packHeader({ ...parts(files), kept: files.length - 1, keptChars: charsOf(files) - 1 })]);
  let raw = rawBudgetOf(budget);
  if (overhead! > raw) {
    const what = repo.diff ? 'the unified diff' : 'the instruction';
    throw new PanoptesError('invalid_input', `${what} alone (~${overhead} tokens) does not fit the window of ${opts.window} tokens less ${opts.answerTokens} for the answer`, { where: repo.diff ? '--diff' : '--prompt' });
  }
  for (let refit = 0; ; refit++) {
    throwIfStopped(opts.signal);
    const { kept, dropped } = fitFiles(files, overhead!, raw);
    const prompt = packPrompt(parts(kept), kept.map((f) => f.block));
    const promptTokens = await estimatePromptTokens([{ role: 'user', content: prompt }]);
    if (promptTokens > budget && refit < MAX_REFITS && kept.length > 0) {
      raw -= promptTokens - budget;
      continue;
    }
    const keptChars = charsOf(kept);
    const totalChars = charsOf(files);
    const metadata: PackMetadata = {
      source: repo.kind,
      repository: repo.name,
      ...(label === undefined ? {} : { group: label }),
      coverage: {
        files: kept.length,
        totalFiles: files.length,
        chars: keptChars,
        totalChars,
        ratio: totalChars === 0 ? 1 : Math.round((keptChars / totalChars) * 10_000) / 10_000,
      },
      dropped: dropped.map((f) => f.path),
      leftOut: countLeftOut(repo.leftOut),
      fit: { models: [...opts.models], window: opts.window, answerTokens: opts.answerTokens, promptTokens },
      ...(repo.diff ? { diff: { base: repo.diff.base, head: repo.diff.head } } : {}),
    };
    return { id: label === undefined ? repo.name : `${repo.name}/${label}`, prompt, metadata };
  }
}

export async function packRepository(repo: RepoFiles, opts: PackOptions): Promise<PackedVignette[]> {
  if (opts.answerTokens >= opts.window) {
    throw new PanoptesError('invalid_input', `--answer-tokens ${opts.answerTokens} leaves no room in the window of ${opts.window} tokens`, { where: '--answer-tokens' });
  }
  if (repo.files.length === 0) {
    throw new PanoptesError('invalid_input', `${repo.name} has no text files to pack`, { where: repo.name });
  }
  const files = await sizeFiles(repo, opts.signal);
  const whole = await packGroup(repo, files, opts, undefined);
  if (!opts.split || whole.metadata.dropped.length === 0) return [whole];
  const out: PackedVignette[] = [];
  for (const group of groupFiles(files, opts.split)) out.push(await packGroup(repo, group.files, opts, group.label));
  return out;
}
