/**
 * Krippendorff's alpha across a scorer's judges, in the score report: a hand-computed value,
 * cells in any order, a single judge (null), no judges (no field), and the two mock judges over a
 * real judged sweep, whose agreement is high but not perfect.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../../core/models/catalog.js';
import { JudgeDefinitionSchema } from '../../../core/scoring/judge/judge-definition.js';
import { createLlmJudge } from '../../../core/scoring/judge/llm-judge.js';
import { buildScoreReport, type ScoreCell } from '../../../core/scoring/report.js';
import { router, tempStore, type TempStore } from '../../models/helpers.js';

const options = { runId: 'r', scorer: 'judged', scorerVersion: 'v', kind: 'pass_fail' as const, epochs: 1 };

function cells(verdicts: Array<[string, string, number]>): ScoreCell[] {
  return verdicts.map(([vignetteId, judge, value]) => ({ model: 'm', vignetteId, epoch: 1, value, passed: value === 1, judge }));
}

describe('judge agreement in the score report', () => {
  it('reports nominal alpha for pass/fail verdicts, whatever the order of the cells', async () => {
    // Units [1,1], [0,0], [1,0], [0,0]: D_o = 2/8, D_e = (8² − 3² − 5²)/(8·7) = 30/56, alpha = 1 − (1/4)(56/30) = 8/15.
    const verdicts: Array<[string, string, number]> = [
      ['v1', 'j1', 1], ['v1', 'j2', 1], ['v2', 'j1', 0], ['v2', 'j2', 0], ['v3', 'j1', 1], ['v3', 'j2', 0], ['v4', 'j1', 0], ['v4', 'j2', 0],
    ];
    const report = await buildScoreReport(options, cells(verdicts));
    expect(report.judges!.judges).toEqual(['j1', 'j2']);
    expect(report.judges!.alpha).toBeCloseTo(8 / 15, 12);
    const shuffled = await buildScoreReport(options, cells([...verdicts].reverse()));
    expect(shuffled.judges).toEqual({ alpha: report.judges!.alpha, judges: ['j2', 'j1'] });
    // One pass rule: the 1-1 split on v3 is no majority, so it fails in the mean as in pass@1.
    expect(report.models[0]!.mean).toBe(0.25);
    expect(report.models[0]!.pass_at_k['1']).toBe(0.25);
  });

  it('has no alpha with one judge, and no judges field for scorers without judges', async () => {
    const one = await buildScoreReport(options, cells([['v1', 'j1', 1], ['v2', 'j1', 0]]));
    expect(one.judges).toEqual({ alpha: null, judges: ['j1'] });
    const rules = await buildScoreReport(options, [{ model: 'm', vignetteId: 'v1', epoch: 1, value: 1, passed: true }]);
    expect(rules.judges).toBeUndefined();
  });

  it('refuses more judges than a definition may name', async () => {
    const many = Array.from({ length: 9 }, (_, j) => ['v1', `j${j}`, 1] as [string, string, number]);
    await expect(buildScoreReport(options, cells(many))).rejects.toThrow(/more than 8 judges/);
  });
});

describe('the two mock judges', () => {
  let ts: TempStore;
  beforeEach(() => {
    ts = tempStore();
  });
  afterEach(() => ts.cleanup());

  it('agree well beyond chance but not perfectly over a judged sweep', async () => {
    const r = router({ catalog: Catalog.load(join(import.meta.dirname, '../../../examples/catalog.json')), store: ts.store.router });
    const judge = createLlmJudge({
      definition: JudgeDefinitionSchema.parse({ name: 'correct', type: 'judge', judges: ['mock-judge', 'mock-judge-2'], rubric: 'Correct?' }),
      version: 'v',
      client: r,
    });
    const out: ScoreCell[] = [];
    for (let i = 0; i < 300; i++) {
      for (const epoch of [1, 2]) {
        const response = (i + epoch) % 3 === 0 ? 'wrong' : `answer ${i}`;
        const verdicts = await judge.score({ runId: 'r', model: 'mock-fast', epoch, vignette: { id: `v${i}`, prompt: `Q${i}`, target: `answer ${i}` }, response, calls: { privacy: 'strict', skipPromptCache: false } });
        for (const v of verdicts) out.push({ model: 'mock-fast', vignetteId: `v${i}`, epoch, value: v.value, passed: v.passed, judge: v.judge });
      }
    }
    await r.close();
    const report = await buildScoreReport({ ...options, epochs: 2 }, out);
    expect(report.judges!.judges).toEqual(['mock-judge', 'mock-judge-2']);
    expect(report.judges!.alpha).toBeGreaterThan(0.3);
    expect(report.judges!.alpha).toBeLessThan(0.9);
  });
});
