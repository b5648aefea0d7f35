/**
 * The rule scorers and the scoring file: each rule's pass and fail, explanations only on a fail,
 * severity carried through, versions stable under key order and changed by any edit, and bad
 * definitions refused with the field they are in.
 */
import { describe, expect, it } from 'vitest';
import { ScorerRegistry } from '../../core/scoring/scorer-registry.js';
import type { ScoreInput } from '../../core/scoring/scorer.js';
import { ScoringConfigSchema, type ScorerDefinition } from '../../core/scoring/scoring-config.js';
import { canonicalJson } from '../../core/canonical-json.js';
import { scorerVersion } from '../../core/scoring/scorer-version.js';
import { extractChoice } from '../../core/scoring/answer-choice.js';

const registry = new ScorerRegistry();

function input(response: string, target?: string): ScoreInput {
  return { runId: 'r', model: 'm', epoch: 1, vignette: { id: 'v1', prompt: 'p', ...(target === undefined ? {} : { target }) }, response, calls: { privacy: 'strict', skipPromptCache: false } };
}

async function score(def: Record<string, unknown>, response: string, target?: string) {
  const parsed = ScoringConfigSchema.parse({ scorers: [{ name: 's', ...def }] });
  const [v] = await registry.build(parsed.scorers[0]!, 'scorers.0').scorer.score(input(response, target));
  return v!;
}

describe('rule scorers', () => {
  it('match: trimmed and case-folded on both sides', async () => {
    expect(await score({ type: 'match' }, '  Paris \n', 'paris')).toEqual({ value: 1, passed: true, severity: 'none', explanation: '', judge: null });
    const miss = await score({ type: 'match' }, 'Lyon', 'Paris');
    expect(miss).toMatchObject({ value: 0, passed: false, severity: 'hard' });
    expect(miss.explanation).toContain('"Lyon"');
    expect(await score({ type: 'match' }, 'Lyon')).toMatchObject({ passed: false, explanation: expect.stringContaining('no target') });
  });

  it('includes: the target by default, any or all of given values, case rules', async () => {
    expect((await score({ type: 'includes' }, 'It is PARIS, surely', 'paris')).passed).toBe(true);
    expect((await score({ type: 'includes', values: ['a1', 'b2'] }, 'only A1 here')).passed).toBe(true);
    expect((await score({ type: 'includes', values: ['a1', 'b2'], all: true }, 'only a1 here')).explanation).toContain('"b2"');
    expect((await score({ type: 'includes', values: ['A1'], caseSensitive: true }, 'a1')).passed).toBe(false);
  });

  it('regex, words, sections, banned', async () => {
    expect((await score({ type: 'regex', pattern: '^\\d+$' }, '123')).passed).toBe(true);
    expect((await score({ type: 'regex', pattern: 'abc', flags: 'i' }, 'xABCx')).passed).toBe(true);
    expect((await score({ type: 'words', min: 3, max: 4 }, 'one two')).explanation).toBe('2 words, fewer than 3');
    expect((await score({ type: 'words', max: 2 }, 'one  two\tthree')).explanation).toBe('3 words, more than 2');
    expect((await score({ type: 'words', min: 1 }, '')).passed).toBe(false);
    const doc = '# Summary\ntext\n**Plan**\nmore\nRisks:\n- a';
    expect((await score({ type: 'sections', headings: ['Summary', 'Plan', 'Risks'] }, doc)).passed).toBe(true);
    expect((await score({ type: 'sections', headings: ['Summary', 'Dose'] }, doc)).explanation).toBe('missing section "Dose"');
    expect((await score({ type: 'sections', headings: ['Plan'] }, 'the plan is to wait')).passed).toBe(false);
    const banned = await score({ type: 'banned', phrases: ['as an AI'], severity: 'soft' }, 'As an AI, I cannot');
    expect(banned).toMatchObject({ value: 0, passed: false, severity: 'soft', explanation: 'contains "as an AI"' });
  });

  it('choice: finds the chosen option in the usual phrasings', async () => {
    expect(extractChoice('The answer is (C).', ['A', 'B', 'C', 'D', 'E'])).toBe('C');
    expect(extractChoice('B) because of the dose', ['A', 'B', 'C'])).toBe('B');
    expect(extractChoice('Answer: d', ['A', 'B', 'C', 'D'])).toBe('D');
    expect(extractChoice('I think it is A', ['A', 'B'])).toBe('A');
    expect(extractChoice('no letter here', ['A', 'B'])).toBeNull();
    expect((await score({ type: 'choice' }, 'My answer: B', 'B')).passed).toBe(true);
    expect((await score({ type: 'choice' }, 'My answer: B', '(c)')).explanation).toBe('chose B, expected C');
    expect((await score({ type: 'choice', choices: ['yes', 'no'] }, 'Answer: no', 'no')).passed).toBe(true);
  });

  it('json: parses (bare or fenced), optionally against a JSON Schema', async () => {
    expect((await score({ type: 'json' }, '{"a": 1}')).passed).toBe(true);
    expect((await score({ type: 'json' }, '```json\n{"a": 1}\n```')).passed).toBe(true);
    expect((await score({ type: 'json' }, '{a: 1}')).explanation).toMatch(/^not JSON/);
    const schema = { type: 'object', required: ['dose'], properties: { dose: { type: 'number' } } };
    expect((await score({ type: 'json', schema }, '{"dose": 4}')).passed).toBe(true);
    expect((await score({ type: 'json', schema }, '{"dose": "4"}')).explanation).toContain('/dose');
  });

  it('absurd inputs: a megabyte response, unicode, an empty string', async () => {
    const big = 'word '.repeat(200_000);
    expect((await score({ type: 'words', max: 10 }, big)).explanation).toBe('200000 words, more than 10');
    expect((await score({ type: 'match' }, 'ÉCOLE', 'école')).passed).toBe(true);
    expect((await score({ type: 'json' }, '')).passed).toBe(false);
  });
});

describe('the scoring file', () => {
  it('refuses bad definitions, naming the field', () => {
    const bad = (scorers: unknown[]) => {
      const r = ScoringConfigSchema.safeParse({ scorers });
      return r.success ? 'ok' : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    };
    expect(bad([{ name: 'x', type: 'regex', pattern: '(' }])).toContain('scorers.0.pattern: not a valid regular expression');
    expect(bad([{ name: 'x', type: 'words' }])).toContain('scorers.0.min');
    expect(bad([{ name: 'x', type: 'words', min: 5, max: 2 }])).toContain('scorers.0.max: min is above max');
    expect(bad([{ name: 'x', type: 'nope' }])).toContain('scorers.0.type');
    expect(bad([{ name: 'x', type: 'match', extra: 1 }])).toContain('scorers.0');
    expect(bad([{ name: 'a', type: 'match' }, { name: 'a', type: 'match' }])).toContain('scorers.1.name: "a" is also scorers.0\'s name');
    expect(bad([])).toContain('scorers');
    expect(bad(Array.from({ length: 65 }, (_, i) => ({ name: `s${i}`, type: 'match' })))).toContain('scorers');
  });

  it('refuses an unusable JSON Schema when the scorer is built', () => {
    const config = ScoringConfigSchema.parse({ scorers: [{ name: 'j', type: 'json', schema: { type: 'no-such-type' } }] });
    expect(() => registry.buildAll(config)).toThrow(/scorers\.0\.schema: not a usable JSON Schema/);
  });

  it('a version is a hash of the whole definition, not of its key order', () => {
    const a: ScorerDefinition = { name: 'w', type: 'words', min: 1, max: 9 };
    const b = JSON.parse('{"max": 9, "type": "words", "min": 1, "name": "w"}') as ScorerDefinition;
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(scorerVersion(a)).toBe(scorerVersion(b));
    expect(scorerVersion({ ...a, max: 10 })).not.toBe(scorerVersion(a));
    expect(scorerVersion({ ...a, severity: 'soft' })).not.toBe(scorerVersion(a));
    expect(scorerVersion(a)).toMatch(/^[0-9a-f]{16}$/);
  });
});
