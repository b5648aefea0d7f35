/**
 * The first layer: rules, pure and fast. Each rule type turns its definition into a check of one
 * response (against the vignette's target where it has one) that passes or fails: value 1 or 0,
 * an explanation only when it failed, and the definition's severity on a failure.
 * Runs on: Node (core).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { PanoptesError } from '../domain.js';
import { extractChoice } from './answer-choice.js';
import { parseJsonResponse } from './answer-json.js';
import { sameNumber, showNumber, soleNumber, statedNumbers, type StatedNumber } from './answer-numbers.js';
import { ANSWER_WINDOW, answerTail, foldText, normalizeAnswer } from './answer-text.js';
import { linearRegex, schemaRegExp } from './linear-regex.js';
import { UnscorableRecord, type ScoreInput, type ScoreValue, type Severity } from './scorer.js';
import type {
  BannedDefinitionSchema,
  ChoiceDefinitionSchema,
  IncludesDefinitionSchema,
  JsonDefinitionSchema,
  MatchDefinitionSchema,
  RegexDefinitionSchema,
  ScorerDefinition,
  SectionsDefinitionSchema,
  WordsDefinitionSchema,
} from './scoring-config.js';
import type { z } from 'zod';

/** A rule's check of one response: null when it passed, else why it failed. */
export type RuleCheck = (input: ScoreInput) => string | null;

function quote(text: string, max = 80): string {
  // Only the start is shown, so only the start is read: an explanation of a megabyte costs nothing.
  const t = text.trim().slice(0, max * 4).replace(/\s+/g, ' ');
  return JSON.stringify(t.length > max ? `${t.slice(0, max)}…` : t);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const NO_TARGET = 'the vignette has no target to compare with';

/**
 * The vignette's target, or null without one. An empty one (or, for `match`, one of nothing but
 * punctuation) would be found in every answer: the record is refused rather than passed.
 */
function targetOf(vignette: ScoreInput['vignette'], rule: string, normalized?: (t: string) => string): string | null {
  if (vignette.target === undefined) return null;
  if ((normalized ?? ((t: string) => t.trim()))(vignette.target) === '') {
    throw new UnscorableRecord(`vignette "${vignette.id}" has an empty target (${quote(vignette.target)}), which the ${rule} rule would find in every answer: give the vignette its answer, or leave the target out`);
  }
  return vignette.target;
}

/**
 * Ends with `want` as a whole word (or at a non-word edge): "the capital is paris", not "sparis";
 * a number's sign or decimal point joins it ("-5" and "3.5" do not end with the word "5").
 */
function endsWithWord(got: string, want: string): boolean {
  if (!got.endsWith(want)) return false;
  const before = got.slice(0, got.length - want.length);
  if (before === '' || !/^[\p{L}\p{N}]/u.test(want)) return true;
  return !(/^\p{N}/u.test(want) ? /[\p{L}\p{N}\p{M}\-+\u2212.]$/u : /[\p{L}\p{N}\p{M}]$/u).test(before);
}

function numericCheck(response: string, expected: StatedNumber, exact: boolean): string | null {
  const shown = showNumber(expected);
  if (exact) {
    const sole = soleNumber(foldText(response));
    return sole !== null && sameNumber(sole, expected) ? null : `answered ${quote(response)}, expected the number ${shown} and nothing else`;
  }
  const last = statedNumbers(foldText(answerTail(response))).at(-1);
  if (last === undefined) return `states no number, expected ${shown}`;
  return sameNumber(last, expected) ? null : `the last number stated is ${showNumber(last)}, expected ${shown}`;
}

/** Targets as `match` compares them, kept while a scorer runs: a run has a few per vignette, read again every epoch and model. */
function normalizedTargets(): (target: string) => string {
  const known = new Map<string, string>();
  return (target) => {
    let n = known.get(target);
    if (n === undefined) {
      if (known.size >= 10_000) known.clear();
      n = normalizeAnswer(target);
      known.set(target, n);
    }
    return n;
  };
}

function matchRule(def: z.infer<typeof MatchDefinitionSchema>): RuleCheck {
  const exact = def.exact === true;
  const normalizedTarget = normalizedTargets();
  return ({ response, vignette }) => {
    const target = targetOf(vignette, 'match', exact ? (t) => foldText(t).trim() : normalizedTarget);
    if (target === null) return NO_TARGET;
    if (response.trim() === '') return `the answer is empty, expected ${quote(target)}`;
    if (exact && response.trim().length > ANSWER_WINDOW) return `the answer runs past ${ANSWER_WINDOW} characters, which exact matching compares`;
    const expected = def.numeric === true ? soleNumber(foldText(target)) : null;
    // A target that is not a number is matched as text, numeric or not.
    if (expected !== null) return numericCheck(response, expected, exact);
    if (exact) return foldText(response).trim() === foldText(target).trim() ? null : `answered ${quote(response)}, expected ${quote(target)}`;
    return endsWithWord(normalizeAnswer(answerTail(response)), normalizedTarget(target)) ? null : `answered ${quote(response)}, expected it to end with ${quote(target)}`;
  };
}

function includesRule(def: z.infer<typeof IncludesDefinitionSchema>): RuleCheck {
  const norm = def.caseSensitive ? (t: string) => t : foldText;
  const fixed = def.values?.map(norm);
  return ({ response, vignette }) => {
    const target = fixed ? null : targetOf(vignette, 'includes');
    const values = fixed ?? (target === null ? undefined : [norm(target)]);
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

function choiceRule(def: z.infer<typeof ChoiceDefinitionSchema>): RuleCheck {
  const choices = def.choices ?? LETTERS;
  return ({ response, vignette }) => {
    const target = targetOf(vignette, 'choice');
    if (target === null) return NO_TARGET;
    const expected = extractChoice(target, choices) ?? target.trim();
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
  const norm = def.caseSensitive ? (t: string) => t : foldText;
  const phrases = def.phrases.map(norm);
  return ({ response }) => {
    const text = norm(response);
    const found = def.phrases.filter((_, i) => text.includes(phrases[i]!));
    return found.length === 0 ? null : `contains ${found.map((f) => quote(f)).join(', ')}`;
  };
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
      return matchRule(def);
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
