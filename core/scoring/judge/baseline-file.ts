/**
 * A pairwise judge's baseline from a file: the answers each answer is compared with, read from a
 * JSONL file instead of another model of the run. A line is `{"id": vignette id, "response": text}`,
 * or a line of Panoptes' own responses.jsonl (`vignette_id`, `epoch`, `response`, ...), so a run can
 * be judged against last month's answers. For a record at epoch e the line of its vignette at epoch
 * e wins, else the vignette's first line. The file is read as a stream under the manifest's input
 * rules (UTF-8 only, a BOM skipped, nesting and lone surrogates refused), every line validated
 * (errors name file:line and field), and hashed while it is read: the hash pins the file's content
 * in the scorer's definition, so re-scoring with a changed file is a new scorer version.
 * Runs on: Node (core).
 */
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import { PanoptesError } from '../../domain.js';
import { strictJsonlLines, structureProblem } from '../../manifest.js';
import { OutsideRoots, openRegularFileWithin } from '../../regular-file.js';
import { formatZodIssues } from '../../validation.js';
import type { ScoringConfig } from '../scoring-config.js';

/** Baseline answers live in memory while their scorer does: a file larger than this is refused. */
export const MAX_BASELINE_FILE_BYTES = 64 * 1024 * 1024;

const VignetteId = z.union([z.string(), z.number().int()], { error: 'must be a string or a whole number' }).transform((v) => String(v).trim());

/** `{"id", "response"}`: the simple shape a user writes. */
const SimpleLineSchema = z.object({ id: VignetteId, response: z.string({ error: 'must be a string' }) }).loose();

/** A line of a run's responses.jsonl: its vignette, epoch and answer (the other fields are not read). */
const ExportLineSchema = z
  .object({ vignette_id: VignetteId, epoch: z.number().int().min(1), response: z.string({ error: 'must be a string' }) })
  .loose();

interface AnswersOfVignette {
  /** The vignette's first line's answer: what a record of an epoch without a line of its own is compared with. */
  first: string;
  byEpoch?: Map<number, string>;
}

export class BaselineAnswers {
  constructor(
    private readonly answers: ReadonlyMap<string, AnswersOfVignette>,
    /** The sha256 of the file's bytes, in hex. */
    readonly sha256: string,
  ) {}

  /** The answer a record of `vignetteId` at `epoch` is compared with; undefined when the file has none for the vignette. */
  answer(vignetteId: string, epoch: number): string | undefined {
    const a = this.answers.get(vignetteId);
    return a === undefined ? undefined : (a.byEpoch?.get(epoch) ?? a.first);
  }

  get size(): number {
    return this.answers.size;
  }
}

function refuse(where: string, message: string): never {
  throw new PanoptesError('invalid_input', `${where}: ${message}`, { where });
}

/** One line's vignette id, epoch (responses.jsonl's shape only) and answer, validated. */
function lineOf(raw: object, where: string): { id: string; epoch: number | undefined; response: string } {
  const exported = 'vignette_id' in raw;
  const parsed = exported ? ExportLineSchema.safeParse(raw) : SimpleLineSchema.safeParse(raw);
  if (!parsed.success) refuse(where, formatZodIssues(parsed.error));
  const d = parsed.data as { id?: string; vignette_id?: string; epoch?: number; response: string };
  const id = (exported ? d.vignette_id : d.id) ?? '';
  if (id === '') refuse(where, `${exported ? 'vignette_id' : 'id'}: must not be empty`);
  return { id, epoch: exported ? d.epoch : undefined, response: d.response };
}

/** The sha256 of a regular file's bytes, read through its open handle. */
async function sha256Of(handle: FileHandle): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of handle.createReadStream({ start: 0, end: MAX_BASELINE_FILE_BYTES, autoClose: false })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** What a scorer version holds a baseline file to when it reads it again to score. */
export interface BaselineReRead {
  /** The sha256 pinned at attach (absent for a version attached before files were pinned). */
  sha256?: string | undefined;
  /**
   * The folders the file must still be in, judged by the real path of the file opened (a server's
   * manifest roots, as at attach over HTTP); absent where any file may be read (the CLI, the app).
   */
  roots?: readonly string[] | undefined;
}

/**
 * Reads and validates a baseline file; `field` names the definition's field in errors about the
 * file as a whole. Only a regular file is read (a FIFO is refused at once). Read `again` (to
 * score), the file opened is confined to `again.roots` before a byte is read, and its sha256
 * checked against the pinned one before a line is parsed, so a file that changed (or a path now
 * pointing elsewhere) is refused, and none of its content reaches an error message.
 */
export async function readBaselineFile(path: string, field: string, again: BaselineReRead = {}): Promise<BaselineAnswers> {
  let handle: FileHandle;
  let size: number;
  try {
    handle = await openRegularFileWithin(path, again.roots);
    size = (await handle.stat()).size;
  } catch (err) {
    if (err instanceof OutsideRoots) refuse(field, `cannot read the baseline file "${path}" (the file it names now is ${err.message})`);
    refuse(field, `cannot read the baseline file "${path}" (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  try {
    return await readOpened(handle, path, field, size, again.sha256);
  } finally {
    await handle.close();
  }
}

async function readOpened(handle: FileHandle, path: string, field: string, size: number, pinned: string | undefined): Promise<BaselineAnswers> {
  const tooLarge = (bytes: string) => `the baseline file "${path}" is ${bytes} bytes; baseline answers are held in memory, so files over ${MAX_BASELINE_FILE_BYTES} bytes (64 MiB) are refused`;
  if (size > MAX_BASELINE_FILE_BYTES) refuse(field, tooLarge(String(size)));
  if (pinned !== undefined) {
    const now = await sha256Of(handle);
    if (now !== pinned) {
      throw new PanoptesError('invalid_input', `the baseline file "${path}" no longer has the content this scorer version was made with (sha256 ${pinned}, now ${now})`, { where: field });
    }
  }
  const hash = createHash('sha256');
  // One byte past the bound at most, so a file that grew since its size was read is still refused.
  const stream = handle.createReadStream({ start: 0, end: MAX_BASELINE_FILE_BYTES, autoClose: false });
  let bytes = 0;
  stream.on('data', (chunk) => {
    bytes += chunk.length;
    hash.update(chunk);
  });
  const answers = new Map<string, AnswersOfVignette>();
  try {
    // The manifest's input rules: UTF-8 only (an error on its line otherwise), a BOM skipped, CRLF
    // taken, and no nesting past MAX_NESTING nor a lone surrogate in what a line holds.
    for await (const read of strictJsonlLines(stream as AsyncIterable<Buffer>)) {
      const where = `${path}:${read.line}`;
      if ('message' in read) refuse(where, read.message);
      let raw: unknown;
      try {
        raw = JSON.parse(read.text);
      } catch (err) {
        refuse(where, `invalid JSON: ${(err as Error).message}`);
      }
      if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) refuse(where, 'expected a JSON object with "id" and "response"');
      const problem = structureProblem(raw as Record<string, unknown>);
      if (problem !== null) refuse(where, problem);
      const { id, epoch, response } = lineOf(raw, where);
      const known = answers.get(id);
      if (!known) {
        answers.set(id, epoch === undefined ? { first: response } : { first: response, byEpoch: new Map([[epoch, response]]) });
      } else if (epoch === undefined) {
        refuse(where, `id: vignette "${id}" already has an answer on an earlier line (give an epoch, as responses.jsonl does, to have one per epoch)`);
      } else {
        const byEpoch = (known.byEpoch ??= new Map());
        if (byEpoch.has(epoch)) refuse(where, `epoch: vignette "${id}" already has an answer at epoch ${epoch} on an earlier line`);
        byEpoch.set(epoch, response);
      }
    }
  } catch (err) {
    stream.destroy();
    // A file that grew past the bound while it was read ends in a cut line: the size is the error.
    if (bytes > MAX_BASELINE_FILE_BYTES) refuse(field, tooLarge(`more than ${MAX_BASELINE_FILE_BYTES}`));
    if (err instanceof PanoptesError) throw err;
    refuse(field, `cannot read the baseline file "${path}" (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (bytes > MAX_BASELINE_FILE_BYTES) refuse(field, tooLarge(`more than ${MAX_BASELINE_FILE_BYTES}`));
  if (answers.size === 0) refuse(field, `the baseline file "${path}" holds no answers`);
  return new BaselineAnswers(answers, hash.digest('hex'));
}

/**
 * The scoring file's pairwise judges with their baseline file resolved (from where the engine
 * runs; the command line resolves it from the scoring file first), read, validated, and pinned by
 * its hash: what is attached, and what the scorer version is the hash of. A pinned hash the file no
 * longer has is refused.
 */
export async function pinBaselineFiles(config: ScoringConfig): Promise<ScoringConfig> {
  const scorers = await Promise.all(
    config.scorers.map(async (d, i) => {
      if (d.type !== 'judge' || d.baselineFile === undefined) return d;
      const path = resolve(d.baselineFile);
      const { sha256 } = await readBaselineFile(path, `scorers.${i}.baselineFile`);
      if (d.baselineSha256 !== undefined && d.baselineSha256 !== sha256) {
        refuse(`scorers.${i}.baselineSha256`, `the baseline file "${path}" no longer has this content (its sha256 is now ${sha256})`);
      }
      return { ...d, baselineFile: path, baselineSha256: sha256 };
    }),
  );
  return { ...config, scorers };
}
