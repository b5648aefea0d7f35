/**
 * Reads a promptfooconfig.yaml the way promptfoo resolves it: `prompts` (strings, `file://`
 * text files split on `---` lines, `{id, raw}` objects), `tests` (inline, or `file://` CSV, JSONL,
 * JSON or YAML files, whose CSV columns `__expected`, `__description`, `__threshold`, `__metric`
 * promptfoo gives meaning to), `defaultTest` merged into every test, and `vars` arrays of strings
 * expanded to their cartesian product, key by key in order (promptfoo's generateVarCombinations).
 * A var `file://PATH` is the file's text, as promptfoo loads it. What is not carried over (an
 * assertion's `transform`, `provider`, ...) is listed, never dropped unsaid.
 * Runs on: Node (core).
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { YAMLParseError, parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { PanoptesError } from '../domain.js';
import { formatZodIssues } from '../validation.js';
import type { FidelityNote } from './imported-suite.js';
import type { PromptfooAssertion } from './promptfoo-assertions.js';
import { tableRows } from './table-rows.js';

/** The assertion keys the import carries; any other (transform, provider, rubricPrompt, ...) is listed as not carried over. */
const ASSERTION_KEYS = new Set(['type', 'value', 'threshold', 'weight', 'metric']);
const AssertSchema = z.looseObject({
  type: z.string().min(1),
  value: z.unknown().optional(),
  threshold: z.number().optional(),
  weight: z.number().optional(),
  metric: z.string().optional(),
});
const TestSchema = z.looseObject({
  description: z.string().optional(),
  vars: z.record(z.string(), z.unknown()).optional(),
  assert: z.array(AssertSchema).optional(),
  threshold: z.number().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
const PromptSchema = z.union([z.string(), z.looseObject({ id: z.string().optional(), raw: z.string().optional(), label: z.string().optional() })]);
const ProviderSchema = z.union([z.string(), z.looseObject({ id: z.string(), label: z.string().optional() })]);
const one = <T extends z.ZodType>(s: T) => z.union([s, z.array(s)]).transform((v) => (Array.isArray(v) ? v : [v]) as Array<z.infer<T>>);
const ConfigSchema = z.looseObject({
  description: z.string().optional(),
  prompts: one(PromptSchema),
  providers: one(ProviderSchema).optional(),
  // Each inline test is checked on its own (loadPromptfooConfig), so a bad one is named by its place.
  tests: one(z.unknown()).optional(),
  defaultTest: TestSchema.optional(),
});

export type PromptfooTest = z.infer<typeof TestSchema>;

export interface PromptfooPrompt {
  raw: string;
  /** The prompt's `id` or `label` when the config gives one. */
  id?: string;
}

/** One case's test: the config's test merged with `defaultTest`, its vars one combination. */
export interface PromptfooCase {
  description?: string;
  vars: Record<string, unknown>;
  assert: PromptfooAssertion[];
  threshold?: number;
  metadata?: Record<string, unknown>;
}

export interface PromptfooSuite {
  prompts: PromptfooPrompt[];
  providers: string[];
  cases: PromptfooCase[];
  notes: FidelityNote[];
}

function bad(where: string, message: string): PanoptesError {
  return new PanoptesError('invalid_input', `${where}: ${message}`, { where });
}

function fileRef(value: string, base: string): string | null {
  if (!value.startsWith('file://')) return null;
  const rel = value.slice('file://'.length);
  return isAbsolute(rel) ? rel : join(base, rel);
}

async function readText(path: string, from: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw bad(from, `cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

function refuseGlob(path: string, from: string): void {
  if (/[*?[\]{}]/.test(path)) throw bad(from, `${path}: file globs are not supported; name each file`);
}

async function loadPrompts(config: z.infer<typeof ConfigSchema>, base: string, source: string): Promise<PromptfooPrompt[]> {
  const prompts: PromptfooPrompt[] = [];
  for (const [i, p] of config.prompts.entries()) {
    const where = `${source}: prompts.${i}`;
    const raw = typeof p === 'string' ? p : p.raw ?? p.id;
    if (raw === undefined) throw bad(where, 'a prompt needs raw text (or an id that is its text)');
    const id = typeof p === 'string' ? undefined : p.raw === undefined ? p.label : p.id ?? p.label;
    const path = fileRef(raw, base);
    if (path === null) {
      prompts.push(id === undefined ? { raw } : { raw, id });
      continue;
    }
    refuseGlob(path, where);
    if (/\.(js|cjs|mjs|ts|py)(:\w+)?$/i.test(path)) throw bad(where, `${path}: prompt functions cannot be imported; render the prompts first`);
    if (/\.(ya?ml|jsonl)$/i.test(path)) throw bad(where, `${path}: YAML and JSONL prompt files are not imported; give the prompt as text, or a conversation as a .json file`);
    // A .json prompt file is one prompt (a conversation, as a JSON list of messages): never split.
    if (/\.json$/i.test(path)) {
      prompts.push({ raw: (await readText(path, where)).trim(), id: id ?? path.split('/').pop()! });
      continue;
    }
    const parts = (await readText(path, where)).split(/^---$/m).map((s) => s.trim()).filter((s) => s !== '');
    for (const [k, part] of parts.entries()) prompts.push({ raw: part, id: `${id ?? path.split('/').pop()!}${parts.length > 1 ? `-${k + 1}` : ''}` });
  }
  return prompts;
}

const EXPECTED = /^(not-)?(equals|contains-any|contains-all|icontains-any|icontains-all|contains|icontains|starts-with|regex|is-json|javascript|llm-rubric|python|similar)(?:\(([\d.]+)\))?(?::([\s\S]*))?$/;

/** A CSV `__expected` cell as promptfoo reads it: `type:value`, `grade:`/`fn:` shorthands, else equals. */
export function assertionFromCell(cell: string): PromptfooAssertion {
  const text = cell.trim();
  for (const [prefix, type] of [['grade:', 'llm-rubric'], ['fn:', 'javascript'], ['eval:', 'javascript']] as const) {
    if (text.startsWith(prefix)) return { type, value: text.slice(prefix.length).trim() };
  }
  const m = EXPECTED.exec(text);
  if (m === null) return { type: 'equals', value: text };
  const type = `${m[1] ?? ''}${m[2]!}`;
  const value = m[4]?.trim();
  const a: PromptfooAssertion = { type };
  if (value !== undefined && value !== '') a.value = /(-any|-all)$/.test(m[2]!) ? value.split(',').map((s) => s.trim()) : value;
  if (m[3] !== undefined) a.threshold = Number(m[3]);
  return a;
}

async function testsFromCsv(path: string, notes: FidelityNote[]): Promise<PromptfooTest[]> {
  const tests: PromptfooTest[] = [];
  const ignored = new Set<string>();
  for await (const { row } of tableRows(path, 'csv')) {
    const test: PromptfooTest = { vars: {}, assert: [] };
    for (const [col, cell] of Object.entries(row as Record<string, string>)) {
      if (!col.startsWith('__')) test.vars![col] = cell;
      else if (/^__expected\d*$/.test(col)) {
        if (cell.trim() !== '') test.assert!.push({ ...assertionFromCell(cell) });
      } else if (col === '__description') test.description = cell;
      else if (col === '__threshold' && cell.trim() !== '') test.threshold = Number(cell);
      else if (col === '__metric') for (const a of test.assert!) a.metric = cell;
      else ignored.add(col);
    }
    tests.push(test);
  }
  for (const col of ignored) notes.push({ what: `column ${col} of ${path}`, why: 'not carried over: only __expected, __description, __threshold and __metric are' });
  return tests;
}

async function testsFromFile(path: string, where: string, notes: FidelityNote[]): Promise<unknown[]> {
  refuseGlob(path, where);
  try {
    await stat(path);
  } catch (err) {
    throw bad(where, `cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  if (/\.csv$/i.test(path)) return testsFromCsv(path, notes);
  if (/\.jsonl$/i.test(path)) {
    const rows: unknown[] = [];
    for await (const { row } of tableRows(path, 'jsonl')) rows.push(row);
    return rows;
  }
  const text = await readText(path, where);
  let parsed: unknown;
  try {
    parsed = /\.json$/i.test(path) ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    const line = err instanceof YAMLParseError ? err.linePos?.[0]?.line : undefined;
    throw bad(`${path}${line ? `:${line}` : ''}`, `cannot parse: ${(err as Error).message.split('\n')[0]}`);
  }
  return Array.isArray(parsed) ? parsed : [parsed];
}

/**
 * A var's `file://PATH` values (one, or each of an array) read as promptfoo reads them: the file's
 * text. Scripts that compute a var and images are refused: they cannot be posed as text.
 */
async function loadVarFiles(vars: Record<string, unknown>, base: string, where: string): Promise<Record<string, unknown>> {
  const load = async (value: unknown, key: string): Promise<unknown> => {
    if (typeof value !== 'string') return value;
    const path = fileRef(value, base);
    if (path === null) return value;
    refuseGlob(path, `${where}, var ${key}`);
    if (/\.(js|cjs|mjs|ts|py)(:\w+)?$/i.test(path)) throw bad(`${where}, var ${key}`, `${path}: vars computed by a script cannot be imported; give the value`);
    if (/\.(png|jpe?g|gif|webp|bmp|pdf|mp3|wav)$/i.test(path)) throw bad(`${where}, var ${key}`, `${path}: an image or media var cannot be posed as text`);
    return readText(path, `${where}, var ${key}`);
  };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(vars)) out[key] = Array.isArray(value) ? await Promise.all(value.map((v) => load(v, key))) : await load(value, key);
  return out;
}

/** promptfoo's cartesian product: each key in order, an array of strings giving one case per value. */
export function varCombinations(vars: Record<string, unknown>): Array<Record<string, unknown>> {
  let combos: Array<Record<string, unknown>> = [{}];
  for (const [key, value] of Object.entries(vars)) {
    const values = Array.isArray(value) && typeof value[0] === 'string' ? value : [value];
    combos = combos.flatMap((c) => values.map((v: unknown) => ({ ...c, [key]: v })));
  }
  return combos;
}

export async function loadPromptfooConfig(configPath: string): Promise<PromptfooSuite> {
  const base = dirname(configPath);
  const text = await readText(configPath, configPath);
  let raw: unknown;
  try {
    raw = parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    const line = err instanceof YAMLParseError ? err.linePos?.[0]?.line : undefined;
    throw bad(`${configPath}${line ? `:${line}` : ''}`, `not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) throw bad(configPath, formatZodIssues(parsed.error));
  const config = parsed.data;
  const notes: FidelityNote[] = [];
  const prompts = await loadPrompts(config, base, configPath);
  const tests: PromptfooTest[] = [];
  for (const [i, t] of (config.tests ?? [{}]).entries()) {
    if (typeof t !== 'string') {
      const inline = TestSchema.safeParse(t);
      if (!inline.success) throw bad(`${configPath}: tests.${i}`, formatZodIssues(inline.error));
      tests.push(inline.data);
      continue;
    }
    const where = `${configPath}: tests.${i}`;
    const path = fileRef(t, base) ?? join(base, t);
    for (const [k, item] of (await testsFromFile(path, where, notes)).entries()) {
      const one = TestSchema.safeParse(item);
      if (!one.success) throw bad(`${path} test ${k + 1}`, formatZodIssues(one.error));
      tests.push(one.data);
    }
  }
  const d = config.defaultTest ?? {};
  const cases: PromptfooCase[] = [];
  const dropped = new Map<string, number>();
  for (const a of [...(d.assert ?? []), ...tests.flatMap((t) => t.assert ?? [])]) {
    for (const key of Object.keys(a)) if (!ASSERTION_KEYS.has(key)) dropped.set(key, (dropped.get(key) ?? 0) + 1);
  }
  for (const [key, n] of dropped) notes.push({ what: `assertion key "${key}" (${n} assertion${n === 1 ? '' : 's'})`, why: 'not carried over: the raw answer is scored as it is' });
  for (const [ti, t] of tests.entries()) {
    const vars = await loadVarFiles({ ...(d.vars ?? {}), ...(t.vars ?? {}) }, base, `${configPath}: test ${ti + 1}`);
    const merged: PromptfooCase = { vars, assert: [...(d.assert ?? []), ...(t.assert ?? [])] };
    const threshold = t.threshold ?? d.threshold;
    if (threshold !== undefined) merged.threshold = threshold;
    if (t.description !== undefined) merged.description = t.description;
    if (t.metadata !== undefined || d.metadata !== undefined) merged.metadata = { ...(d.metadata ?? {}), ...(t.metadata ?? {}) };
    for (const vars of varCombinations(merged.vars)) cases.push({ ...merged, vars });
  }
  if ('options' in d || tests.some((t) => 'options' in t)) notes.push({ what: 'test options (transform, provider, ...)', why: 'not carried over: Panoptes poses the prompt as it is and scores the raw answer' });
  const providers = (config.providers ?? []).map((p) => (typeof p === 'string' ? p : p.id));
  return { prompts, providers, cases, notes };
}
