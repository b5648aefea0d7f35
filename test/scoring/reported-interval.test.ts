/**
 * The interval a report shows for a pair stays inside the differences two scores in [0, 1] can have.
 * Runs on: Node (test); pure.
 */
import { describe, expect, it } from 'vitest';
import { reportedPair } from '../../core/scoring/reported-interval.js';

describe("a pair's reported interval", () => {
  it('cuts a paired t interval that reaches past +1 at +1 and keeps its lower end', () => {
    // Three epochs, ten vignettes: nine differences of 1 and one of 1/3. The paired t interval is
    // [+0.783, +1.084] (scipy.stats.t agrees); a difference above 1 cannot happen.
    const a = new Array<number>(10).fill(1);
    const b = [...new Array<number>(9).fill(0), 2 / 3];
    const pair = reportedPair(a, b, false, null);
    expect(pair.test).toBe('paired_t');
    expect(pair.ci95![1]).toBe(1);
    expect(pair.ci95![0]).toBeCloseTo(0.7826, 3);
    expect(pair.diff).toBeCloseTo(0.9333, 4);
  });

  it('cuts one reaching below -1 at -1', () => {
    const a = [...new Array<number>(9).fill(0), 2 / 3];
    const b = new Array<number>(10).fill(1);
    const pair = reportedPair(a, b, false, null);
    expect(pair.ci95![0]).toBe(-1);
    expect(pair.ci95![1]).toBeCloseTo(-0.7826, 3);
  });

  it('leaves an interval inside [-1, 1] as the t gives it', () => {
    const a = [1, 0, 1, 1, 0, 1, 0.5, 1, 0, 1];
    const b = [0, 0, 1, 0, 1, 0, 0.5, 1, 0, 0];
    const pair = reportedPair(a, b, false, null);
    expect(pair.ci95![0]).toBeGreaterThan(-1);
    expect(pair.ci95![1]).toBeLessThan(1);
    expect(pair.ci95![0] + pair.ci95![1]).toBeCloseTo(2 * pair.diff, 12);
  });
});
