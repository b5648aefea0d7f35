/**
 * The rules' semantics, as a table: what `match` (default, exact, numeric), `choice`, `includes`
 * and `json` (with `json_parses`, the same rule) pass and fail, the way inspect_ai's scorers do
 * where the docs say so; an empty target refused, never passed; semantics changes make new versions.
 */
import { describe, expect, it } from 'vitest';
import { foldCase } from '../../core/scoring/answer-text.js';
import { statedNumbers } from '../../core/scoring/answer-numbers.js';
import { extractChoice } from '../../core/scoring/answer-choice.js';
import { ScorerRegistry } from '../../core/scoring/scorer-registry.js';
import type { ScoreInput } from '../../core/scoring/scorer.js';
import { ScoringConfigSchema } from '../../core/scoring/scoring-config.js';
import { scorerVersion } from '../../core/scoring/scorer-version.js';
import { codeScorerBuilder } from '../../core/scoring/plugin/code-scorer.js';
import { caseFold } from 'unicode-case-folding';

const registry = new ScorerRegistry();
registry.register('code', codeScorerBuilder({ network: false }));

function input(response: string, target?: string): ScoreInput {
  return { runId: 'r', model: 'm', epoch: 1, vignette: { id: 'v7', prompt: 'p', ...(target === undefined ? {} : { target }) }, response, calls: { privacy: 'strict', skipPromptCache: false } };
}

function scorer(def: Record<string, unknown>) {
  const parsed = ScoringConfigSchema.parse({ scorers: [{ name: 's', ...def }] });
  return registry.build(parsed.scorers[0]!, 'scorers.0').scorer;
}

async function passes(def: Record<string, unknown>, response: string, target?: string): Promise<boolean> {
  const [v] = await scorer(def).score(input(response, target));
  return v!.passed === true;
}

describe('match: normalized, at the end of the answer (inspect_ai\'s match())', () => {
  const table: Array<[string, string, boolean]> = [
    ['Paris', 'Paris', true],
    ['  paris \n', 'Paris', true],
    ['Paris.', 'Paris', true],
    ['**Paris**', 'Paris', true],
    ['_Paris_!', 'Paris', true],
    ['`Paris`', 'Paris', true],
    ['The capital is Paris.', 'Paris', true],
    ['The capital is **Paris**.', 'Paris', true],
    ['The capital of France is\nParis', 'capital of France is Paris', true],
    ['STRASSE', 'straße', true],
    ['Straße', 'STRASSE', true],
    ['caf\u0065\u0301', 'caf\u00e9', true],
    ['ＰＡＲＩＳ', 'paris', true],
    ['ΟΔΟΣ', 'οδος', true],
    ['The capital is Sparis', 'Paris', false],
    ['Paris is the capital', 'Paris', false],
    ['Lyon', 'Paris', false],
    ['', 'Paris', false],
    ['-5', '5', false],
    ['3.5', '5', false],
    ['It is 5.', '5', true],
    ['The answer is 142', '42', false],
    ['42', '42', true],
  ];
  it.each(table)('%j against %j: %s', async (answer, target, pass) => {
    expect(await passes({ type: 'match' }, answer, target)).toBe(pass);
  });

  it('says why a match failed, and that an answer is empty', async () => {
    const [v] = await scorer({ type: 'match' }).score(input('Lyon.', 'Paris'));
    expect(v!.explanation).toBe('answered "Lyon.", expected it to end with "Paris"');
    const [e] = await scorer({ type: 'match' }).score(input('  ', 'Paris'));
    expect(e!.explanation).toBe('the answer is empty, expected "Paris"');
  });
});

describe('match with exact: true, the strict form', () => {
  const table: Array<[string, string, boolean]> = [
    ['  Paris \n', 'paris', true],
    ['STRASSE', 'straße', true],
    ['caf\u0065\u0301', 'café', true],
    ['Paris.', 'Paris', false],
    ['**Paris**', 'Paris', false],
    ['The capital is Paris', 'Paris', false],
  ];
  it.each(table)('%j against %j: %s', async (answer, target, pass) => {
    expect(await passes({ type: 'match', exact: true }, answer, target)).toBe(pass);
  });

  it('refuses to compare an answer past the window', async () => {
    const [v] = await scorer({ type: 'match', exact: true }).score(input('x'.repeat(70_000), 'x'));
    expect(v!.explanation).toContain('runs past 65536 characters');
  });
});

describe('match with numeric: true', () => {
  const table: Array<[string, string, boolean]> = [
    ['1,000', '1000', true],
    ['$1,000', '1000', true],
    ['The total is $1,000.', '1000', true],
    ['1e3', '1000', true],
    ['1E3', '1,000', true],
    ['42.0', '42', true],
    ['**42**', '42', true],
    ['The answer is 42.', '42', true],
    ['Between 10 and 20; I would say 15.', '15', true],
    ['Between 10 and 20; I would say 15.', '10', false],
    ['In 2024 it was 7', '7', true],
    ['It fell to -5 degrees', '-5', true],
    ['It fell to \u22125 degrees', '-5', true],
    ['It fell to 5 degrees', '-5', false],
    ['10-20', '20', true],
    ['0.5', '.5', true],
    ['About 50%', '50%', true],
    ['About 50%', '50', false],
    ['About 50', '50%', false],
    ['50%', '0.5', false],
    ['1,5', '5', true],
    ['12,345,678.9', '12345678.9', true],
    ['v1.2.3', '3', false],
    ['no number here', '42', false],
    ['', '42', false],
    ['The answer is 142', '42', false],
    ['42', '42.0001', false],
    ['0.30000000000000004', '0.3', true],
  ];
  it.each(table)('%j against %j: %s', async (answer, target, pass) => {
    expect(await passes({ type: 'match', numeric: true }, answer, target)).toBe(pass);
  });

  it('exact and numeric: the answer is the number and nothing else', async () => {
    expect(await passes({ type: 'match', numeric: true, exact: true }, ' $1,000. ', '1000')).toBe(true);
    expect(await passes({ type: 'match', numeric: true, exact: true }, 'It is 1000', '1000')).toBe(false);
  });

  it('a target that is not a number is matched as text', async () => {
    expect(await passes({ type: 'match', numeric: true }, 'It is Paris.', 'Paris')).toBe(true);
  });

  it('says which number it read', async () => {
    const [v] = await scorer({ type: 'match', numeric: true }).score(input('Either 41 or 43', '42'));
    expect(v!.explanation).toBe('the last number stated is 43, expected 42');
    const [n] = await scorer({ type: 'match', numeric: true }).score(input('no idea', '42'));
    expect(n!.explanation).toBe('states no number, expected 42');
  });

  it('reads every number of a long list in order', () => {
    expect(statedNumbers('2, 3, 5 and 7.5e1 or -1').map((n) => n.value)).toEqual([2, 3, 5, 75, -1]);
  });
});

describe('choice: the last stated option, never a letter inside a word', () => {
  const AJ = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J'];
  const table: Array<[string, string | null, readonly string[]]> = [
    ["The answer is a tough one, but I'd say C", 'C', AJ],
    ["I'd go with C", 'C', AJ],
    ['C', 'C', AJ],
    ['(b)', 'B', AJ],
    ['The answer is (C).', 'C', AJ],
    ['ANSWER: J', 'J', AJ],
    ['Answer: d', 'D', AJ],
    ['I think it is A', 'A', AJ],
    ['A good question. The answer is H.', 'H', AJ],
    ['The correct answer is B. A is wrong because it ignores the dose.', 'B', AJ],
    ['A or B? B.', 'B', AJ],
    ['Either C or, on reflection, E', 'E', AJ],
    ['Option F is right; G is not.', 'F', AJ],
    ['**G**', 'G', AJ],
    ['It could be b, e.g. for adults', null, AJ],
    ['the answer is c.', 'C', AJ],
    ['I choose i', 'I', AJ],
    ["Don't know", null, AJ],
    ['A-level students', null, AJ],
    ['', null, AJ],
    ['Answer: no', 'no', ['yes', 'no']],
    ['No, the answer is yes', 'yes', ['yes', 'no']],
    ['Nope', null, ['yes', 'no']],
  ];
  it.each(table)('%j: %s', (answer, chosen, choices) => {
    expect(extractChoice(answer, choices)).toBe(chosen);
  });

  it('scores against the target, refusing an empty one', async () => {
    expect(await passes({ type: 'choice', choices: AJ }, "I'd go with C", 'C')).toBe(true);
    expect(await passes({ type: 'choice', choices: AJ }, 'The answer is a tough one', 'A')).toBe(false);
    await expect(scorer({ type: 'choice' }).score(input('A', ' '))).rejects.toThrow(/vignette "v7" has an empty target/);
  });
});

describe('json and json_parses agree on what counts as the JSON', () => {
  const table: Array<[string, boolean]> = [
    ['{"a": 1}', true],
    ['  [1, 2]\n', true],
    ['```json\n{"a": 1}\n```', true],
    ['```\n{"a": 1}\n```', true],
    ['Here it is:\n```json\n{"ok": true}\n```\nHope that helps.', true],
    ['Two tries:\n```json\n{broken\n```\nthen\n```json\n{"ok": 1}\n```', true],
    ['~~~json\n{"a": 1}\n~~~', true],
    ['```python\n{"a": 1}\n```', false],
    ['Here it is: {"a": 1}', false],
    ['{"a": 1', false],
    ['```json\n{"a": 1}', false],
    ['plain words', false],
    ['', false],
  ];
  it.each(table)('%j: %s', async (answer, pass) => {
    expect(await passes({ type: 'json' }, answer)).toBe(pass);
    expect(await passes({ type: 'code', builtin: 'json_parses' }, answer)).toBe(pass);
  });

  it('checks the schema against the block it found, and names the block\'s parse error', async () => {
    const schema = { type: 'object', required: ['dose'] };
    expect(await passes({ type: 'json', schema }, 'Sure:\n```json\n{"dose": 4}\n```')).toBe(true);
    const [v] = await scorer({ type: 'json' }).score(input('Sure:\n```json\n{dose: 4}\n```'));
    expect(v!.explanation).toMatch(/^not JSON: the fenced block: /);
  });

  it('json_parses is pass/fail, as the rule is', () => {
    expect(scorer({ type: 'code', builtin: 'json_parses' }).kind).toBe('pass_fail');
  });

  it('an answer of many unclosed fences is read in one pass', async () => {
    const answer = '```\n'.repeat(100_000);
    expect(await passes({ type: 'json' }, answer)).toBe(false);
  });
});

describe('an empty target is refused, not passed', () => {
  it.each([
    [{ type: 'includes' }, ''],
    [{ type: 'includes' }, '   '],
    [{ type: 'match' }, ''],
    [{ type: 'match' }, '**.**'],
    [{ type: 'match', exact: true }, ' '],
    [{ type: 'choice' }, ''],
  ])('%j with target %j', async (def, target) => {
    await expect(scorer(def).score(input('anything at all', target))).rejects.toThrow(`vignette "v7" has an empty target`);
  });

  it('includes with its own values needs no target', async () => {
    expect(await passes({ type: 'includes', values: ['STRASSE'] }, 'die Straße', '')).toBe(true);
  });
});

describe('case folding', () => {
  it('folds every code point as Unicode\'s CaseFolding.txt does', () => {
    const wrong: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      if (foldCase(c) !== caseFold(c)) wrong.push(cp.toString(16));
    }
    expect(wrong).toEqual([]);
  });

  it('folds in context as character by character: a final sigma, a dotted capital I', () => {
    for (const text of ['ΟΔΟΣ ΟΔΟΣ', 'İstanbul', 'ﬃ ŉ ẞ ᏸ', 'Ǆ ǅ ǆ']) expect(foldCase(text)).toBe(caseFold(text));
  });
});

describe('semantics changes make new versions', () => {
  it('a rule at a new revision hashes differently from its definition alone, a rule at its first as before', () => {
    const match = { name: 'm', type: 'match' };
    expect(scorerVersion(match)).toBe(scorerVersion({ ...match, ruleRevision: 2 }));
    const words = { name: 'w', type: 'words', min: 1 };
    expect(scorerVersion(words)).toMatch(/^[0-9a-f]{16}$/);
    // A definition's version is not the hash of the definition alone once its rule has a revision.
    expect(scorerVersion({ name: 'j', type: 'code', builtin: 'json_parses' })).toBe(scorerVersion({ name: 'j', type: 'code', builtin: 'json_parses', ruleRevision: 2 }));
    expect(scorer({ type: 'match' }).version).toBe(scorerVersion({ name: 's', type: 'match' }));
  });
});
