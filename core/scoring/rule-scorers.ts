/**
 * The first layer: rules, pure and fast. Each rule type turns its definition into a check of one
 * response (against the vignette's target where it has one) that passes or fails: value 1 or 0,
 * an explanation only when it failed, and the definition's severity on a failure.
 * Runs on: Node (core).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { PanoptesError } from '../domain.js';
import { linearRegex, schemaRegExp } from './linear-regex.js';
import type { ScoreInput, ScoreValue, Severity } from './scorer.js';
import type {
  BannedDefinitionSchema,
  ChoiceDefinitionSchema,
  IncludesDefinitionSchema,
  JsonDefinitionSchema,
  RegexDefinitionSchema,
  ScorerDefinition,
  SectionsDefinitionSchema,
  WordsDefinitionSchema,
} from './scoring-config.js';
import type { z } from 'zod';

/** A rule's check of one response: null when it passed, else why it failed. */
export type RuleCheck = (input: ScoreInput) => string | null;

/** Trimmed and case-folded, the way `match` compares a response with its target. */
export function fold(text: string): string {
  return text.trim().toLowerCase();
}

function quote(text: string, max = 80): string {
  const t = text.trim().replace(/\s+/g, ' ');
  return JSON.stringify(t.length > max ? `${t.slice(0, max)}…` : t);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const NO_TARGET = 'the vignette has no target to compare with';

function matchRule(): RuleCheck {
  return ({ response, vignette }) => {
    if (vignette.target === undefined) return NO_TARGET;
    return fold(response) === fold(vignette.target) ? null : `answered ${quote(response)}, expected ${quote(vignette.target)}`;
  };
}

function includesRule(def: z.infer<typeof IncludesDefinitionSchema>): RuleCheck {
  const norm = def.caseSensitive ? (t: string) => t : (t: string) => t.toLowerCase();
  const fixed = def.values?.map(norm);
  return ({ response, vignette }) => {
    const values = fixed ?? (vignette.target === undefined ? undefined : [norm(vignette.target)]);
    if (values === undefined) return NO_TARGET;
    const text = norm(response);
    const missing = values.filter((v) => !text.includes(v));
    if (def.all ? missing.length === 0 : missing.length < values.length) return null;
    return def.all ? `missing ${missing.map((m) => quote(m)).join(', ')}` : `none of ${values.map((v) => quote(v)).join(', ')} appears`;
  };
}

function regexRule(def: z.infer<typeof RegexDefinitionSchema>): RuleCheck {
  const re = linearRegex(def.pattern, def.flags ?? '');
  return ({ response }) => (re.test(response) ? null : `does not match /${def.pattern}/${def.flags ?? ''}`);
}

const LETTERS = ['A', 'B', 'C', 'D', 'E'];

/**
 * The option a response chose: after "answer"/"option"/"choice" (with "is" or a colon), else a
 * parenthesised option, else an option opening the response, else an option standing alone.
 */
export function extractChoice(response: string, choices: readonly string[]): string | null {
  const alt = choices.map(escapeRegex).join('|');
  const patterns = [
    new RegExp(`\\b(?:answer|option|choice)\\s*(?:is\\s*|:\\s*)?\\(?(${alt})\\)?(?![\\w])`, 'i'),
    new RegExp(`\\((${alt})\\)`, 'i'),
    new RegExp(`^\\s*\\**(${alt})\\**(?:[).:\\s]|$)`, 'i'),
    new RegExp(`(?:^|[^\\w])(${alt})(?![\\w])`, 'i'),
  ];
  for (const re of patterns) {
    const m = re.exec(response);
    if (m) return choices.find((c) => c.toLowerCase() === m[1]!.toLowerCase()) ?? null;
  }
  return null;
}

function choiceRule(def: z.infer<typeof ChoiceDefinitionSchema>): RuleCheck {
  const choices = def.choices ?? LETTERS;
  return ({ response, vignette }) => {
    if (vignette.target === undefined) return NO_TARGET;
    const expected = extractChoice(vignette.target, choices) ?? vignette.target.trim();
    const chosen = extractChoice(response, choices);
    if (chosen === null) return `no choice among ${choices.join(', ')} found in ${quote(response)}`;
    return chosen.toLowerCase() === expected.toLowerCase() ? null : `chose ${chosen}, expected ${expected}`;
  };
}

/** Words: runs of non-space characters. */
export function countWords(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c === 32 || (c >= 9 && c <= 13) || c === 160;
    if (!space && !inWord) n += 1;
    inWord = !space;
  }
  return n;
}

function wordsRule(def: z.infer<typeof WordsDefinitionSchema>): RuleCheck {
  return ({ response }) => {
    const n = countWords(response);
    if (def.min !== undefined && n < def.min) return `${n} words, fewer than ${def.min}`;
    if (def.max !== undefined && n > def.max) return `${n} words, more than ${def.max}`;
    return null;
  };
}

function sectionsRule(def: z.infer<typeof SectionsDefinitionSchema>): RuleCheck {
  // A heading: a line holding just the name, as a markdown heading, in bold, or followed by a colon.
  const patterns = def.headings.map(
    (h) => new RegExp(`^[ \\t]*(?:#{1,6}[ \\t]*)?(?:\\*\\*|__)?${escapeRegex(h.trim())}(?:\\*\\*|__)?[ \\t]*:?(?:\\*\\*|__)?[ \\t]*$`, 'im'),
  );
  return ({ response }) => {
    const missing = def.headings.filter((_, i) => !patterns[i]!.test(response));
    return missing.length === 0 ? null : `missing section${missing.length > 1 ? 's' : ''} ${missing.map((m) => quote(m)).join(', ')}`;
  };
}

function bannedRule(def: z.infer<typeof BannedDefinitionSchema>): RuleCheck {
  const norm = def.caseSensitive ? (t: string) => t : (t: string) => t.toLowerCase();
  const phrases = def.phrases.map(norm);
  return ({ response }) => {
    const text = norm(response);
    const found = def.phrases.filter((_, i) => text.includes(phrases[i]!));
    return found.length === 0 ? null : `contains ${found.map((f) => quote(f)).join(', ')}`;
  };
}

/** The JSON a response holds: the whole trimmed text, or the one fenced ```json block in it. */
export function parseJsonResponse(response: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const text = response.trim();
  const fenced = /^```(?:json)?[ \t]*\n([\s\S]*?)\n```$/i.exec(text);
  try {
    return { ok: true, value: JSON.parse(fenced ? fenced[1]! : text) as unknown };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

function jsonRule(def: z.infer<typeof JsonDefinitionSchema>, where: string): RuleCheck {
  let validate: ValidateFunction | undefined;
  if (def.schema !== undefined) {
    try {
      validate = new Ajv({ allErrors: false, strict: false, code: { regExp: schemaRegExp } }).compile(def.schema);
    } catch (err) {
      throw new PanoptesError('invalid_input', `${where}.schema: not a usable JSON Schema: ${(err as Error).message}`, { where: `${where}.schema` });
    }
  }
  return ({ response }) => {
    const parsed = parseJsonResponse(response);
    if (!parsed.ok) return `not JSON: ${parsed.error}`;
    if (validate && !validate(parsed.value)) {
      const e = validate.errors?.[0];
      return `JSON does not fit the schema: ${e ? `${e.instancePath || '/'} ${e.message ?? ''}`.trim() : 'invalid'}`;
    }
    return null;
  };
}

/** The check a rule definition describes; `where` names the definition in errors (`scorers.2`). */
export function ruleCheck(def: ScorerDefinition, where: string): RuleCheck {
  switch (def.type) {
    case 'match':
      return matchRule();
    case 'includes':
      return includesRule(def);
    case 'regex':
      return regexRule(def);
    case 'choice':
      return choiceRule(def);
    case 'words':
      return wordsRule(def);
    case 'sections':
      return sectionsRule(def);
    case 'banned':
      return bannedRule(def);
    case 'json':
      return jsonRule(def, where);
    case 'code':
      // Plugins are built by the builder the engine registers once the sandbox is loaded.
      throw new PanoptesError('invalid_input', `${where}: code scorers need the plugin sandbox, and none is registered here`, { where });
    case 'judge':
      // Judges are built by the builder the engine registers for them, with its model router.
      throw new PanoptesError('invalid_input', `${where}: judge scorers need a model router, and none is registered here`, { where });
  }
}

/** A rule's finding as a score: pass 1, fail 0 with the definition's severity. */
export function ruleValue(failure: string | null, severity: Exclude<Severity, 'none'>): ScoreValue {
  return failure === null
    ? { value: 1, passed: true, severity: 'none', explanation: '', judge: null }
    : { value: 0, passed: false, severity, explanation: failure, judge: null };
}
