/**
 * promptfoo's `assert` items as Panoptes scorers. An assertion that every test carries alike (a
 * `defaultTest` one, or a suite of one test) becomes a scorer of its own: a rule where one fits,
 * a sandboxed code plugin otherwise, an LLM judge for `llm-rubric`. Assertions that differ from
 * test to test travel with their vignettes (metadata `assert`) and one code plugin checks them as
 * promptfoo checks a test; a test's own `llm-rubric` becomes its vignette's target, which the judge
 * reads as its rubric. Anything else is listed, with why, in the fidelity report.
 * Runs on: Node (core).
 */
import type { ScorerDefinition } from '../scoring/scoring-config.js';
import type { FidelityNote } from './imported-suite.js';
import { TEST_ASSERTIONS_PLUGIN, singleAssertionPlugin } from './promptfoo-assert-plugin.js';

export interface PromptfooAssertion {
  type: string;
  value?: unknown;
  threshold?: number | undefined;
  weight?: number | undefined;
  metric?: string | undefined;
}

/** What the vignettes of one test carry for its assertions. */
export interface TestAssertions {
  /** The test's own checks, for the test-assertions plugin (absent when it has none). */
  assert?: Array<{ type: string; value?: unknown; weight?: number }>;
  /** The test's own `llm-rubric`, given to the judge as the vignette's target. */
  target?: string;
}

export interface AssertionPlan {
  scorers: ScorerDefinition[];
  perTest: TestAssertions[];
  notes: FidelityNote[];
}

const CHECKED_IN_PLUGIN = new Set(['equals', 'contains', 'icontains', 'contains-any', 'icontains-any', 'contains-all', 'icontains-all', 'starts-with', 'regex', 'is-json', 'javascript']);

function baseType(type: string): string {
  return type.startsWith('not-') ? type.slice(4) : type;
}

function strings(value: unknown): string[] | null {
  const list = Array.isArray(value) ? value : [value];
  return list.every((v) => typeof v === 'string' && v.length > 0) ? (list as string[]) : null;
}

/** The rule that says exactly what the assertion says, or null when only the plugin does. */
function ruleFor(a: PromptfooAssertion): Record<string, unknown> | null {
  const phrases = strings(a.value);
  switch (a.type) {
    case 'contains':
    case 'contains-any':
      return phrases && { type: 'includes', values: phrases, caseSensitive: true };
    case 'icontains':
    case 'icontains-any':
      return phrases && { type: 'includes', values: phrases };
    case 'contains-all':
      return phrases && { type: 'includes', values: phrases, all: true, caseSensitive: true };
    case 'icontains-all':
      return phrases && { type: 'includes', values: phrases, all: true };
    case 'not-contains':
    case 'not-contains-any':
      return phrases && { type: 'banned', phrases, caseSensitive: true };
    case 'not-icontains':
    case 'not-icontains-any':
      return phrases && { type: 'banned', phrases };
    case 'regex':
      return typeof a.value === 'string' ? { type: 'regex', pattern: a.value } : null;
    case 'is-json':
      return a.value === undefined ? { type: 'json' } : typeof a.value === 'object' && a.value !== null ? { type: 'json', schema: a.value } : null;
    default:
      return null;
  }
}

function isMappable(type: string): boolean {
  return type === 'llm-rubric' || CHECKED_IN_PLUGIN.has(baseType(type));
}

/** The rubric of a judge whose criterion differs per test and so arrives as the vignette's target. */
export const PER_TEST_RUBRIC =
  'The REFERENCE section holds this item\'s grading rubric (imported from a promptfoo llm-rubric assertion). Judge whether the ANSWER meets that rubric; do not compare the answer with the reference as if it were the expected answer.';

export function planAssertions(tests: PromptfooAssertion[][], judge: string): AssertionPlan {
  const notes: FidelityNote[] = [];
  // A metric names an assertion apart: a test's own is-json is not the defaultTest's is-json reported under a metric.
  const key = (a: PromptfooAssertion) => JSON.stringify([a.type, a.value ?? null, a.threshold ?? null, a.weight ?? null, a.metric ?? null]);
  const unmapped = new Map<string, number>();
  const counts = new Map<string, number>();
  for (const test of tests) {
    for (const k of new Set(test.filter((a) => isMappable(a.type)).map(key))) counts.set(k, (counts.get(k) ?? 0) + 1);
    for (const a of test) if (!isMappable(a.type)) unmapped.set(a.type, (unmapped.get(a.type) ?? 0) + 1);
  }
  const uniform = new Set([...counts].filter(([, n]) => n === tests.length && tests.length > 0).map(([k]) => k));
  const scorers: ScorerDefinition[] = [];
  const names = new Set<string>();
  const nameFor = (base: string) => {
    const clean = base.replace(/[^\w.-]+/g, '-').slice(0, 90) || 'assert';
    let name = clean;
    for (let n = 2; names.has(name); n += 1) name = `${clean}-${n}`;
    names.add(name);
    return name;
  };
  const firstTest = tests[0] ?? [];
  for (const a of firstTest.filter((x) => uniform.has(key(x)))) {
    const name = nameFor(a.metric ?? a.type);
    if (a.type === 'llm-rubric') {
      if (typeof a.value !== 'string' || a.value.trim() === '') {
        notes.push({ what: `llm-rubric "${name}"`, why: 'its value is not a rubric text; left out' });
        continue;
      }
      scorers.push({ name, type: 'judge', judges: [judge], rubric: a.value } as ScorerDefinition);
      continue;
    }
    const rule = ruleFor(a);
    scorers.push({ name, ...(rule ?? { type: 'code', code: singleAssertionPlugin({ type: a.type, value: a.value }) }) } as ScorerDefinition);
    if (a.weight !== undefined || a.threshold !== undefined) {
      notes.push({ what: `${a.type} ("${name}")`, why: 'its weight/threshold has no meaning for a scorer of its own: each scorer is reported apart' });
    }
  }
  let anyPerTest = false;
  let anyRubric = false;
  let schemasUnchecked = 0;
  const perTest = tests.map((test, t) => {
    const own: TestAssertions = {};
    for (const a of test.filter((x) => isMappable(x.type) && !uniform.has(key(x)))) {
      if (a.type === 'llm-rubric') {
        if (typeof a.value === 'string' && own.target === undefined) {
          own.target = a.value;
          anyRubric = true;
        } else notes.push({ what: `llm-rubric of test ${t + 1}`, why: 'a test may give one rubric of its own (its vignettes\' target); this one was left out' });
        continue;
      }
      (own.assert ??= []).push({ type: a.type, ...(a.value !== undefined ? { value: a.value } : {}), ...(a.weight !== undefined ? { weight: a.weight } : {}) });
      if (baseType(a.type) === 'is-json' && a.value !== undefined) schemasUnchecked += 1;
      anyPerTest = true;
    }
    return own;
  });
  if (schemasUnchecked > 0) {
    notes.push({
      what: `is-json with a schema of its own (${schemasUnchecked} test${schemasUnchecked === 1 ? '' : 's'})`,
      why: 'checked as JSON only: the sandboxed plugin that checks a test\'s own assertions has no schema validator (an is-json every test shares is a json rule, its schema checked)',
    });
  }
  if (anyPerTest) scorers.push({ name: nameFor('promptfoo-assert'), type: 'code', code: TEST_ASSERTIONS_PLUGIN } as ScorerDefinition);
  if (anyRubric) scorers.push({ name: nameFor('llm-rubric'), type: 'judge', judges: [judge], rubric: PER_TEST_RUBRIC } as ScorerDefinition);
  const unrubricked = perTest.filter((own) => own.target === undefined).length;
  if (anyRubric && unrubricked > 0) {
    notes.push({
      what: `llm-rubric judge on tests without a rubric (${unrubricked} test${unrubricked === 1 ? '' : 's'})`,
      why: 'a judge scores every vignette: the answers of tests with no rubric of their own are judged with no rubric (promptfoo does not grade them); give each test its rubric, or import them apart',
    });
  }
  for (const [type, n] of unmapped) notes.push({ what: `assertion type "${type}" (${n} test${n === 1 ? '' : 's'})`, why: 'no Panoptes scorer does what it does; left out' });
  return { scorers, perTest, notes };
}
