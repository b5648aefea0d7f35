/**
 * Manifests: JSONL files of vignettes, one per line, blank lines ignored. Read as a stream (a 1 GB
 * manifest is never one string) and validated line by line, so every error names its line.
 * Runs on: Node (core).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { PanoptesError, type IndexedVignette, type Vignette } from './domain.js';

const VignetteLineSchema = z
  .object({
    id: z.union([z.string(), z.number().int()], { error: 'must be a string or a whole number' }).transform((v) => String(v).trim()).pipe(z.string().min(1, 'must not be empty')),
    prompt: z.string({ error: 'must be a string' }).refine((p) => p.trim().length > 0, 'must not be empty'),
    system: z.string().optional(),
    target: z.union([z.string(), z.number(), z.boolean()]).transform(String).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .catchall(z.unknown());

export interface ManifestIssue {
  /** 1-based line number in the file. */
  line: number;
  message: string;
}

export interface ManifestCheck {
  path: string;
  /** Valid vignettes read (all of them when there are no issues). */
  count: number;
  /** The first few vignettes, for a preview. */
  preview: Vignette[];
  /** The first issues, in line order (at most the check's `maxIssues`). */
  issues: ManifestIssue[];
  /** How many issues the file has in all; more than `issues.length` when some were not collected. */
  issueCount: number;
  /** Characters of every valid vignette's prompt and system text: what a run's input-token estimate starts from. */
  promptChars: number;
}

const KNOWN_KEYS = new Set(['id', 'prompt', 'system', 'target', 'metadata']);

/** Parses one non-blank line into a vignette, or says what is wrong with it. */
export function parseManifestLine(text: string, line: number): Vignette | ManifestIssue {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { line, message: `invalid JSON: ${(err as Error).message}` };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { line, message: 'expected a JSON object with "id" and "prompt"' };
  }
  for (const required of ['id', 'prompt'] as const) {
    if ((raw as Record<string, unknown>)[required] === undefined) return { line, message: `missing "${required}"` };
  }
  const parsed = VignetteLineSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length > 0 ? `"${issue.path.map(String).join('.')}"` : 'line';
    return { line, message: `${field} ${issue.message}` };
  }
  const { id, prompt, system, target, metadata, ...extra } = parsed.data;
  const v: Vignette = { id, prompt };
  if (system !== undefined) v.system = system;
  if (target !== undefined) v.target = target;
  // Fields Panoptes does not know travel on as metadata rather than being dropped.
  const extraKeys = Object.keys(extra).filter((k) => !KNOWN_KEYS.has(k));
  if (metadata !== undefined || extraKeys.length > 0) {
    v.metadata = { ...Object.fromEntries(extraKeys.map((k) => [k, extra[k]])), ...(metadata ?? {}) };
  }
  return v;
}

function isIssue(x: Vignette | ManifestIssue): x is ManifestIssue {
  return (x as ManifestIssue).message !== undefined && (x as Vignette).prompt === undefined;
}

async function* lines(path: string): AsyncGenerator<{ text: string; line: number }> {
  try {
    const s = await stat(path);
    if (!s.isFile()) throw new Error('not a file');
  } catch (err) {
    throw new PanoptesError('manifest_invalid', `cannot read manifest ${path}: ${(err as Error).message}`, {
      where: path,
    });
  }
  const input = createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 });
  const rl = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of rl) {
      line += 1;
      if (text.trim() === '') continue;
      yield { text, line };
    }
  } catch (err) {
    throw new PanoptesError('manifest_invalid', `cannot read manifest ${path}: ${(err as Error).message}`, {
      where: path,
    });
  } finally {
    rl.close();
    input.destroy();
  }
}

/**
 * Reads a whole manifest, collecting up to `maxIssues` problems with their line numbers: invalid
 * JSON, a missing or empty id or prompt, a duplicate id (naming both lines), an empty file.
 */
export async function checkManifest(
  path: string,
  opts: { previewCount?: number; maxIssues?: number } = {},
): Promise<ManifestCheck> {
  const previewCount = opts.previewCount ?? 5;
  const maxIssues = opts.maxIssues ?? 20;
  const seen = new Map<string, number>();
  const issues: ManifestIssue[] = [];
  const preview: Vignette[] = [];
  let issueCount = 0;
  let promptChars = 0;
  let count = 0;
  const note = (issue: ManifestIssue) => {
    issueCount += 1;
    if (issues.length < maxIssues) issues.push(issue);
  };
  for await (const { text, line } of lines(path)) {
    const v = parseManifestLine(text, line);
    if (isIssue(v)) {
      note(v);
      continue;
    }
    const first = seen.get(v.id);
    if (first !== undefined) {
      note({ line, message: `duplicate id "${v.id}" (first on line ${first})` });
      continue;
    }
    seen.set(v.id, line);
    count += 1;
    promptChars += v.prompt.length + (v.system?.length ?? 0);
    if (preview.length < previewCount) preview.push(v);
  }
  if (count === 0 && issues.length === 0) note({ line: 1, message: 'the manifest holds no vignettes' });
  return { path, count, preview, issues, issueCount, promptChars };
}

/** How many of a failed check's issues an error message lists; the rest are counted. */
export const ISSUES_LISTED = 20;

/** A failed check as one error: the file, its first issues with their lines, and how many more. */
export function manifestError(check: ManifestCheck): PanoptesError {
  const shown = check.issues
    .slice(0, ISSUES_LISTED)
    .map((i) => `${check.path}:${i.line}: ${i.message}`)
    .join('\n');
  const rest = check.issueCount - Math.min(check.issues.length, ISSUES_LISTED);
  const more = rest > 0 ? `\n(${rest} more issue${rest === 1 ? '' : 's'}; ${check.issueCount} in all)` : '';
  const first = check.issues[0];
  return new PanoptesError('manifest_invalid', `invalid manifest:\n${shown}${more}`, {
    where: first ? `${check.path}:${first.line}` : check.path,
  });
}

/**
 * Streams a manifest's vignettes in order, each with its ordinal index. Assumes the manifest was
 * checked; re-validates anyway and throws on the first issue (the file may have changed since).
 */
export async function* readManifest(path: string): AsyncGenerator<IndexedVignette> {
  const seen = new Set<string>();
  let index = 0;
  for await (const { text, line } of lines(path)) {
    const v = parseManifestLine(text, line);
    if (isIssue(v) || seen.has(v.id)) {
      const message = isIssue(v) ? v.message : `duplicate id "${v.id}"`;
      throw new PanoptesError('manifest_invalid', `${path}:${line}: ${message}`, { where: `${path}:${line}` });
    }
    seen.add(v.id);
    yield { ...v, index: index++ };
  }
}
