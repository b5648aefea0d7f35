/**
 * Manifests: JSONL files of vignettes, one per line, blank lines ignored. Read as a stream (a 1 GB
 * manifest is never one string) and validated line by line, so every error names its line.
 * Runs on: Node (core).
 */
import type { FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { PanoptesError, type ChatTurn, type IndexedVignette, type Vignette } from './domain.js';
import { openRegularFile } from './regular-file.js';

const TurnSchema = z
  .object({
    role: z.enum(['system', 'user', 'assistant'], { error: 'must be "system", "user" or "assistant"' }),
    content: z.string({ error: 'must be a string' }),
  })
  .strict();

/** A conversation: system turns first, then user and assistant turns, ending with a non-empty user turn. */
const MessagesSchema = z
  .array(TurnSchema, { error: 'must be an array of {role, content} turns' })
  .min(1, 'must hold at least one turn')
  .max(10_000)
  .superRefine((turns, ctx) => {
    if (turns.length === 0) return;
    const firstOther = turns.findIndex((t) => t.role !== 'system');
    const lateSystem = turns.findIndex((t, i) => t.role === 'system' && firstOther !== -1 && i > firstOther);
    if (lateSystem !== -1) ctx.addIssue({ code: 'custom', path: [lateSystem, 'role'], message: 'a system turn must come before the first user or assistant turn' });
    const last = turns[turns.length - 1]!;
    if (last.role !== 'user') ctx.addIssue({ code: 'custom', path: [turns.length - 1, 'role'], message: 'the last turn must be the user\'s (the turn the model answers)' });
    else if (last.content.trim() === '') ctx.addIssue({ code: 'custom', path: [turns.length - 1, 'content'], message: 'must not be empty' });
  });

const VignetteLineSchema = z
  .object({
    id: z.union([z.string(), z.number().int()], { error: 'must be a string or a whole number' }).transform((v) => String(v).trim()).pipe(z.string().min(1, 'must not be empty')),
    prompt: z.string({ error: 'must be a string' }).refine((p) => p.trim().length > 0, 'must not be empty').optional(),
    messages: MessagesSchema.optional(),
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

const KNOWN_KEYS = new Set(['id', 'prompt', 'messages', 'system', 'target', 'metadata']);

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
  const obj = raw as Record<string, unknown>;
  // An optional field given as null is a field not given.
  for (const optional of ['system', 'target', 'metadata', 'messages']) if (obj[optional] === null) delete obj[optional];
  if (obj.id === undefined) return { line, message: 'missing "id"' };
  if (obj.prompt === undefined && obj.messages === undefined) return { line, message: 'missing "prompt"' };
  if (obj.prompt !== undefined && obj.messages !== undefined) return { line, message: 'give "prompt" or "messages", not both' };
  if (obj.system !== undefined && obj.messages !== undefined) return { line, message: '"system" does not go with "messages": make it the conversation\'s first turn, {"role": "system", ...}' };
  const problem = structureProblem(obj);
  if (problem !== null) return { line, message: problem };
  const parsed = VignetteLineSchema.safeParse(obj);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length > 0 ? `"${issue.path.map(String).join('.')}"` : 'line';
    return { line, message: `${field} ${issue.message}` };
  }
  const { id, prompt, messages, system, target, metadata, ...extra } = parsed.data;
  const v: Vignette = messages === undefined ? { id, prompt: prompt! } : { id, prompt: messages[messages.length - 1]!.content, messages };
  if (system !== undefined) v.system = system;
  if (target !== undefined) v.target = target;
  // Fields Panoptes does not know travel on as metadata rather than being dropped.
  const extraKeys = Object.keys(extra).filter((k) => !KNOWN_KEYS.has(k));
  if (metadata !== undefined || extraKeys.length > 0) {
    v.metadata = { ...Object.fromEntries(extraKeys.map((k) => [k, extra[k]])), ...(metadata ?? {}) };
  }
  return v;
}

/** How deep a line's values may nest: deep enough for any real metadata, shallow enough for every recursive step after. */
export const MAX_NESTING = 64;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * What JSON.parse accepts but the rest of the way cannot carry: nesting deeper than MAX_NESTING
 * (stringifying or cloning it overflows the stack), and a string or key holding an escaped lone
 * surrogate such as "\ud83d" (it cannot be written as UTF-8). Walked without recursion.
 */
export function structureProblem(root: Record<string, unknown>): string | null {
  const stack: Array<{ value: unknown; path: string[] }> = [{ value: root, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    const field = () => `"${path.length > 6 ? `${path.slice(0, 6).join('.')}...` : path.join('.')}"`;
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return `${field()} holds a lone UTF-16 surrogate (an escape like "\\ud83d" without its pair), which is not text`;
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (path.length >= MAX_NESTING) return `${field()} nests deeper than ${MAX_NESTING} levels`;
    for (const [key, child] of Object.entries(value)) {
      if (LONE_SURROGATE.test(key)) return `a key in ${path.length > 0 ? field() : 'the line'} holds a lone UTF-16 surrogate (an escape like "\\ud83d" without its pair), which is not text`;
      stack.push({ value: child, path: [...path, key] });
    }
  }
  return null;
}

/** Characters of a conversation's turns: what the run's input-token estimate counts for a chat vignette. */
export function conversationChars(turns: readonly ChatTurn[]): number {
  let n = 0;
  for (const t of turns) n += t.content.length;
  return n;
}

function isIssue(x: Vignette | ManifestIssue): x is ManifestIssue {
  return (x as ManifestIssue).message !== undefined && (x as Vignette).prompt === undefined;
}

const NEWLINE = 0x0a;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The file's non-blank lines, decoded strictly (see strictJsonlLines). */
async function* lines(path: string): AsyncGenerator<{ text: string; line: number } | ManifestIssue> {
  let handle: FileHandle;
  try {
    // Opened without blocking and checked by what was opened: a FIFO is refused, never waited on.
    handle = await openRegularFile(path);
  } catch (err) {
    throw new PanoptesError('manifest_invalid', `cannot read manifest ${path}: ${(err as Error).message}`, {
      where: path,
    });
  }
  const input = handle.createReadStream({ highWaterMark: 1 << 20 });
  try {
    yield* strictJsonlLines(input);
  } catch (err) {
    throw new PanoptesError('manifest_invalid', `cannot read manifest ${path}: ${(err as Error).message}`, {
      where: path,
    });
  } finally {
    input.destroy();
  }
}

/**
 * The non-blank lines of a JSONL stream, decoded strictly: a byte sequence that is not UTF-8 is an
 * error on its line, not a U+FFFD quietly stored. A UTF-8 byte order mark at the start is skipped,
 * and a line may end in CRLF. The input rules of every JSONL file a user gives (manifests, baseline
 * files), with structureProblem for what a line's JSON holds.
 */
export async function* strictJsonlLines(input: AsyncIterable<Buffer>): AsyncGenerator<{ text: string; line: number } | ManifestIssue> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let line = 0;
  let pending: Buffer[] = [];
  let first = true;
  const decode = (bytes: Buffer): { text: string; line: number } | ManifestIssue | null => {
    line += 1;
    let body = first && bytes.subarray(0, 3).equals(BOM) ? bytes.subarray(3) : bytes;
    first = false;
    if (body.length > 0 && body[body.length - 1] === 0x0d) body = body.subarray(0, body.length - 1);
    let text: string;
    try {
      text = decoder.decode(body);
    } catch {
      return { line, message: `not valid UTF-8 (first bad byte at byte ${firstInvalidUtf8(body) + 1} of the line); save the file as UTF-8` };
    }
    return text.trim() === '' ? null : { text, line };
  };
  for await (const chunk of input) {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
      pending.push(chunk.subarray(start, nl));
      const out = decode(pending.length === 1 ? pending[0]! : Buffer.concat(pending));
      pending = [];
      start = nl + 1;
      if (out) yield out;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  if (pending.length > 0) {
    const out = decode(Buffer.concat(pending));
    if (out) yield out;
  }
}

/** The offset of the first byte that does not begin or continue a valid UTF-8 sequence. */
function firstInvalidUtf8(bytes: Buffer): number {
  const valid = (n: number, stream: boolean) => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, n), { stream });
      return true;
    } catch {
      return false;
    }
  };
  // Halving finds the longest prefix with no bad byte in O(n log n) without hand-decoding UTF-8
  // (streaming, so a prefix that ends inside a character is not counted against it).
  let lo = 0;
  let hi = bytes.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (valid(mid, true)) lo = mid;
    else hi = mid - 1;
  }
  if (valid(lo, false)) return lo;
  // The prefix ends in a character that never completes: the bad sequence starts at its lead byte.
  let start = lo - 1;
  while (start > 0 && lo - start < 4 && (bytes[start]! & 0xc0) === 0x80) start -= 1;
  return start;
}

/**
 * Reads a whole manifest, collecting up to `maxIssues` problems with their line numbers: invalid
 * JSON, a missing or empty id or prompt, a duplicate id (naming both lines), an empty file.
 */
export async function checkManifest(
  path: string,
  opts: {
    previewCount?: number;
    maxIssues?: number;
    /**
     * Called with each vignette, in order with its index, while the file has shown no issue: so
     * one read both checks a manifest and copies it (a run's creation), and a caller discards what
     * it took when the check fails.
     */
    onVignette?: (v: IndexedVignette) => void | Promise<void>;
  } = {},
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
  for await (const item of lines(path)) {
    const v = 'text' in item ? parseManifestLine(item.text, item.line) : item;
    const line = item.line;
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
    if (opts.onVignette && issueCount === 0) await opts.onVignette({ ...v, index: count });
    count += 1;
    promptChars += v.messages === undefined ? v.prompt.length + (v.system?.length ?? 0) : conversationChars(v.messages);
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
  for await (const item of lines(path)) {
    const v = 'text' in item ? parseManifestLine(item.text, item.line) : item;
    const line = item.line;
    if (isIssue(v) || seen.has(v.id)) {
      const message = isIssue(v) ? v.message : `duplicate id "${v.id}"`;
      throw new PanoptesError('manifest_invalid', `${path}:${line}: ${message}`, { where: `${path}:${line}` });
    }
    seen.add(v.id);
    yield { ...v, index: index++ };
  }
}

/**
 * The line of a manifest that holds the vignette `id`, read again from the file; null when the
 * file is gone or no longer holds it. For errors that name a stored vignette's line.
 */
export async function manifestLineOf(path: string, id: string): Promise<number | null> {
  try {
    for await (const item of lines(path)) {
      if (!('text' in item)) continue;
      const v = parseManifestLine(item.text, item.line);
      if (!isIssue(v) && v.id === id) return item.line;
    }
  } catch {
    // An unreadable file names no line; the caller says which vignette instead.
  }
  return null;
}
