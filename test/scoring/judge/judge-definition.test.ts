/**
 * The judge definition's schema: what a scoring file may say about a judge, the errors that name
 * the field when it says something wrong, and the defaults (temperature 0, a fixed seed) filled in.
 */
import { describe, expect, it } from 'vitest';
import { JUDGE_DEFAULT_SAMPLING, JudgeDefinitionSchema, resolveJudgeDefinition } from '../../../core/scoring/judge/judge-definition.js';

const base = { name: 'helpful', type: 'judge', judges: ['mock-judge'], rubric: 'Is the answer helpful?' };

function issues(raw: unknown): Array<{ path: string; message: string }> {
  const r = JudgeDefinitionSchema.safeParse(raw);
  return r.success ? [] : r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
}

describe('judge definition', () => {
  it('fills the defaults: pass/fail, single mode, temperature 0 and a fixed seed, hard severity', () => {
    const d = resolveJudgeDefinition(JudgeDefinitionSchema.parse(base));
    expect(d).toEqual({
      name: 'helpful',
      judges: ['mock-judge'],
      rubric: 'Is the answer helpful?',
      scale: 'pass_fail',
      mode: 'single',
      baseline: null,
      baselineFile: null,
      sampling: JUDGE_DEFAULT_SAMPLING,
      severity: 'hard',
    });
    expect(d.sampling).toMatchObject({ temperature: 0, seed: expect.any(Number) });
    // A field the file gives wins; the rest keep their defaults.
    expect(resolveJudgeDefinition(JudgeDefinitionSchema.parse({ ...base, sampling: { temperature: 0.7 } })).sampling).toEqual({
      ...JUDGE_DEFAULT_SAMPLING,
      temperature: 0.7,
    });
  });

  it('names the field of every mistake', () => {
    expect(issues({ ...base, judges: [] })).toEqual([expect.objectContaining({ path: 'judges' })]);
    expect(issues({ ...base, judges: ['a', 'a'] })).toEqual([{ path: 'judges', message: 'judges must not repeat a model' }]);
    expect(issues({ ...base, rubric: '   ' })).toEqual([expect.objectContaining({ path: 'rubric' })]);
    expect(issues({ ...base, scale: { min: 5, max: 1 } })[0]).toMatchObject({ message: 'scale.max must be greater than scale.min' });
    expect(issues({ ...base, scale: { min: 1, max: Infinity } }).length).toBeGreaterThan(0);
    expect(issues({ ...base, mode: 'pairwise' })).toEqual([{ path: 'baseline', message: 'pairwise mode needs a baseline model (or a baselineFile) to compare with' }]);
    expect(issues({ ...base, baseline: 'mock-fast' })).toEqual([{ path: 'baseline', message: 'a baseline is only for mode "pairwise"' }]);
    expect(issues({ ...base, baselineFile: 'b.jsonl' })).toEqual([{ path: 'baselineFile', message: 'a baselineFile is only for mode "pairwise"' }]);
    expect(issues({ ...base, mode: 'pairwise', baseline: 'm', baselineFile: 'b.jsonl' })).toEqual([{ path: 'baselineFile', message: 'give baseline or baselineFile, not both' }]);
    expect(issues({ ...base, mode: 'pairwise', baseline: 'm', baselineSha256: 'a'.repeat(64) })).toEqual([expect.objectContaining({ path: 'baselineSha256' })]);
    expect(issues({ ...base, mode: 'pairwise', baselineFile: 'b.jsonl', baselineSha256: 'xyz' })).toEqual([expect.objectContaining({ path: 'baselineSha256' })]);
    expect(issues({ ...base, mode: 'pairwise', baseline: 'm', scale: 'pass_fail' })).toEqual([expect.objectContaining({ path: 'scale' })]);
    expect(issues({ ...base, sampling: { temperature: 9 } })).toEqual([expect.objectContaining({ path: 'sampling.temperature' })]);
    expect(issues({ ...base, severity: 'fatal' })).toEqual([expect.objectContaining({ path: 'severity' })]);
    expect(issues({ ...base, judge: 'mock-judge' })).toEqual([{ path: '', message: expect.stringMatching(/"judge"/) }]);
    expect(issues({ ...base, type: 'match' })).toEqual([expect.objectContaining({ path: 'type' })]);
  });
});
