/**
 * A staged template read and checked: YAML (or JSON) with its line numbers, validated with a zod
 * schema, then checked as a whole: stage names unique, every placeholder known and naming only an
 * earlier stage (a stage naming itself or a later one would be a cycle: stages run in order), a
 * fan-out only over an earlier stage, `{{item}}` only in a fan-out stage, a judge loop only on the
 * last stage with 1-5 rounds. An error names the file and line of the field it is about.
 * Runs on: Node (core).
 */
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { PanoptesError, type StagedTemplate } from '../domain.js';
import { ScorerDefinitionSchema } from '../scoring/scoring-config.js';
import { BUILTIN_TEMPLATES } from './builtin-templates.js';

const StageName = z.string().regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, 'a name: a letter, then letters, digits, _ or -');

const StageSchema = z
  .object({
    name: StageName,
    prompt: z.string().min(1, 'a prompt').max(1_000_000),
    fanOut: StageName.optional(),
    judge: z
      .object({
        scorers: z.array(ScorerDefinitionSchema).min(1).max(16),
        maxRounds: z.number().int('a whole number of rounds').min(1, 'maxRounds must be 1 to 5').max(5, 'maxRounds must be 1 to 5'),
      })
      .strict()
      .optional(),
  })
  .strict();

export const TemplateSchema = z
  .object({
    name: StageName,
    description: z.string().optional(),
    stages: z.array(StageSchema).min(1, 'at least one stage').max(32),
  })
  .strict();

const PLACEHOLDER = /\{\{\s*([^}]*?)\s*\}\}/g;

type Path = (string | number)[];

/** A problem of the template at a path; the caller turns the path into a line. */
class TemplateIssue extends Error {
  constructor(
    readonly path: Path,
    message: string,
  ) {
    super(message);
  }
}

function checkPlaceholders(template: z.infer<typeof TemplateSchema>): void {
  const order = new Map(template.stages.map((s, i) => [s.name, i]));
  template.stages.forEach((stage, i) => {
    const at: Path = ['stages', i, 'prompt'];
    for (const [, name] of stage.prompt.matchAll(PLACEHOLDER)) {
      if (name === 'vignette.prompt' || /^vignette\.metadata\.[^\s.]+$/.test(name!)) continue;
      if (name === 'item') {
        if (stage.fanOut === undefined) throw new TemplateIssue(at, `stage "${stage.name}" uses {{item}} but has no fanOut`);
        continue;
      }
      const ref = /^stages\.(.+)$/.exec(name!)?.[1];
      if (ref === undefined) throw new TemplateIssue(at, `unknown placeholder {{${name}}} (known: vignette.prompt, vignette.metadata.KEY, stages.NAME, item)`);
      const j = order.get(ref);
      if (j === undefined) throw new TemplateIssue(at, `{{stages.${ref}}}: unknown stage "${ref}"`);
      if (j === i) throw new TemplateIssue(at, `{{stages.${ref}}}: stage "${ref}" refers to itself (a cycle)`);
      if (j > i) throw new TemplateIssue(at, `{{stages.${ref}}}: stage "${ref}" runs after "${stage.name}" (a cycle: stages run in order, each may use only earlier ones)`);
    }
  });
}

function checkStructure(template: z.infer<typeof TemplateSchema>): void {
  const seen = new Map<string, number>();
  template.stages.forEach((stage, i) => {
    const first = seen.get(stage.name);
    if (first !== undefined) throw new TemplateIssue(['stages', i, 'name'], `"${stage.name}" is also stages.${first}'s name`);
    seen.set(stage.name, i);
  });
  template.stages.forEach((stage, i) => {
    if (stage.fanOut !== undefined) {
      const j = seen.get(stage.fanOut);
      if (j === undefined) throw new TemplateIssue(['stages', i, 'fanOut'], `fanOut: unknown stage "${stage.fanOut}"`);
      if (j >= i) throw new TemplateIssue(['stages', i, 'fanOut'], `fanOut: stage "${stage.fanOut}" is not earlier than "${stage.name}"`);
    }
    if (stage.judge && i !== template.stages.length - 1) throw new TemplateIssue(['stages', i, 'judge'], `a judge loop belongs to the last stage, not "${stage.name}"`);
  });
  checkPlaceholders(template);
}

/**
 * A template as a frame carries it (already checked where the run was made): the same shape and
 * the same whole-template checks, reported as schema issues at their path.
 */
export const CheckedTemplateSchema = TemplateSchema.superRefine((template, ctx) => {
  try {
    checkStructure(template);
  } catch (err) {
    if (!(err instanceof TemplateIssue)) throw err;
    ctx.addIssue({ code: 'custom', path: err.path, message: err.message });
  }
});

/** The nearest line of `path` in the document (walking up to a parent that has a node). */
function lineOf(doc: ReturnType<typeof parseDocument>, counter: LineCounter, path: Path): number | undefined {
  for (let p = path; ; p = p.slice(0, -1)) {
    const node = doc.getIn(p, true) as { range?: [number, number, number] } | undefined;
    if (node?.range) return counter.linePos(node.range[0]).line;
    if (p.length === 0) return undefined;
  }
}

/** Reads and checks a template's text; `source` names it in errors (a file name, or `template`). */
export function parseTemplate(text: string, source: string): StagedTemplate {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false });
  const fail = (path: Path, line: number | undefined, message: string): never => {
    const where = line === undefined ? source : `${source}:${line}`;
    throw new PanoptesError('invalid_input', `${where}: ${path.length ? `${path.join('.')}: ` : ''}${message}`, { where });
  };
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    fail([], counter.linePos(e.pos[0]).line, `not YAML: ${e.message.split('\n')[0]}`);
  }
  const parsed = TemplateSchema.safeParse(doc.toJS());
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    fail(path, lineOf(doc, counter, path), issue.message);
  }
  const template = parsed.data!;
  try {
    checkStructure(template);
  } catch (err) {
    if (err instanceof TemplateIssue) fail(err.path, lineOf(doc, counter, err.path), err.message);
    throw err;
  }
  return toStagedTemplate(template);
}

/** The engine's shape of a template that passed the schema and the checks. */
export function toStagedTemplate(template: z.infer<typeof TemplateSchema>): StagedTemplate {
  return {
    name: template.name,
    stages: template.stages.map((s) => ({
      name: s.name,
      prompt: s.prompt,
      ...(s.fanOut === undefined ? {} : { fanOut: s.fanOut }),
      ...(s.judge ? { judge: { scorers: s.judge.scorers, maxRounds: s.judge.maxRounds } } : {}),
    })),
  };
}

/** A built-in template by name (`repo_audit`, `panel_debate`, `design_doc`, `redteam`), else the text itself. */
export function templateFrom(textOrName: string, source: string): StagedTemplate {
  const builtin = Object.hasOwn(BUILTIN_TEMPLATES, textOrName) ? BUILTIN_TEMPLATES[textOrName] : undefined;
  return builtin === undefined ? parseTemplate(textOrName, source) : parseTemplate(builtin, `built-in template ${textOrName}`);
}
