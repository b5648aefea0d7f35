/**
 * The words a pair's verdict reads as, the one rule of the text report, the HTML report and the app.
 * Runs on: Node (test).
 */
import { describe, expect, it } from 'vitest';
import { noVerdictText, pairVerdictText, type PairVerdict } from '../../core/common/pair-verdict.js';

describe('pair verdict words', () => {
  it('names the better model, and says why a pair got no verdict', () => {
    const words = (verdict: PairVerdict) => pairVerdictText({ a: 'gpt', b: 'claude', verdict });
    expect(words('a_better')).toBe('gpt better');
    expect(words('b_better')).toBe('claude better');
    expect(words('not_distinguishable')).toBe('not distinguishable');
    expect(words('too_few')).toBe('too few vignettes to compare');
    expect(words('too_few_clusters')).toBe('too few clusters to compare');
  });

  it('has a reason only for the verdicts that are not given', () => {
    expect((['a_better', 'b_better', 'not_distinguishable'] as const).map(noVerdictText)).toEqual([null, null, null]);
    expect(noVerdictText('too_few_clusters')).toBe('too few clusters to compare');
  });
});
