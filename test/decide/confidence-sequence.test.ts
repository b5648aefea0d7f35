/**
 * The betting confidence sequence against its numpy twin (scripts/decision-reference.py) and by
 * simulation: equal models rarely ever look different however long the run goes, a clear
 * difference stops early, and the adaptive decision stops pairs, names winners and keeps models in
 * contention as it should.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AdaptiveDecision, seededOrder } from '../../core/scoring/adaptive-decision.js';
import { BettingConfidenceSequence } from '../../core/scoring/confidence-sequence.js';
import { casesOf } from '../helpers/fixture-cases.js';

const fixture = JSON.parse(readFileSync('test/scoring/fixtures/decision.json', 'utf8')) as {
  adaptive: {
    sequence: { population: number; alpha: number; d: number[]; intervals: [number, number][] };
    simulation: { population: number; runs: number; null_false_decision_rate: number; clear: { mean_share_of_calls: number; max_share_of_calls: number; decided: number }; close: { decided: number } };
  };
};

/** A small seeded generator for the simulations here (xorshift32). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

describe('the betting confidence sequence', () => {
  it('matches the numpy implementation interval for interval', () => {
    const s = fixture.adaptive.sequence;
    const cs = new BettingConfidenceSequence({ population: s.population, alpha: s.alpha });
    casesOf(s.d, 'confidence-sequence').forEach((d, i) => {
      cs.push(d);
      const [lo, hi] = cs.interval();
      expect(lo).toBeCloseTo(s.intervals[i]![0], 12);
      expect(hi).toBeCloseTo(s.intervals[i]![1], 12);
    });
    expect(cs.n).toBe(s.d.length);
  });

  it('the committed simulation: equal models ≤ alpha false decisions over 1,000 runs; 0.9 vs 0.5 stops within 40 % of the calls', () => {
    const sim = fixture.adaptive.simulation;
    expect(sim.runs).toBe(1000);
    expect(sim.null_false_decision_rate).toBeLessThanOrEqual(0.05);
    expect(sim.clear.decided).toBe(1);
    expect(sim.clear.max_share_of_calls).toBeLessThanOrEqual(0.4);
    expect(sim.close.decided).toBeLessThan(0.5);
  });

  it('here too: 200 null runs rarely decide, and 0.9 against 0.5 decides early', () => {
    const r = rng(42);
    let falseDecisions = 0;
    for (let run = 0; run < 200; run++) {
      const cs = new BettingConfidenceSequence({ population: 300, alpha: 0.05, grid: 401 });
      for (let t = 0; t < 300; t++) {
        const p = r();
        cs.push((r() < p ? 1 : 0) - (r() < p ? 1 : 0));
        if (cs.excludesZero()) {
          falseDecisions++;
          break;
        }
      }
    }
    expect(falseDecisions).toBeLessThanOrEqual(20);
    const cs = new BettingConfidenceSequence({ population: 300, alpha: 0.05 });
    while (!cs.excludesZero()) cs.push((r() < 0.9 ? 1 : 0) - (r() < 0.5 ? 1 : 0));
    expect(cs.n).toBeLessThan(120);
    expect(cs.interval()[0]).toBeGreaterThan(0);
  });

  it('refuses values out of [−1, 1] and draws past the population', () => {
    const cs = new BettingConfidenceSequence({ population: 1, alpha: 0.05 });
    expect(() => cs.push(1.5)).toThrow(/must be in \[−1, 1\], got 1.5/);
    cs.push(0);
    expect(() => cs.push(0)).toThrow(/all 1 of the population/);
  });
});

describe('the adaptive decision', () => {
  const rows = (n: number, values: Record<string, (i: number) => number>) =>
    Array.from({ length: n }, (_, i) => new Map(Object.entries(values).map(([m, f]) => [m, f(i)])));

  it('decides a clear pair with its winner, keeps the others in contention, and is the same fed whole or in batches', () => {
    const r = rng(7);
    const data = rows(300, { strong: () => (r() < 0.95 ? 1 : 0), weak: () => (r() < 0.3 ? 1 : 0), twin: () => 0 });
    for (const row of data) row.set('twin', row.get('weak')!);
    const batched = new AdaptiveDecision({ models: ['strong', 'weak', 'twin'], population: 300, alpha: 0.05, margin: 0.1 });
    for (let lo = 0; lo < 300 && !batched.done(); lo += 10) batched.addBatch(data.slice(lo, lo + 10));
    const [sw, st, wt] = batched.decisions();
    expect(sw).toMatchObject({ status: 'decided', winner: 'strong', open: false });
    expect(st).toMatchObject({ status: 'decided', winner: 'strong' });
    // Identical answers: the interval closes in on 0 and the pair ends equivalent inside ±0.1.
    expect(wt).toMatchObject({ status: 'equivalent', winner: null });
    expect(wt!.interval[0]).toBeGreaterThanOrEqual(-0.1);
    expect(wt!.n).toBeGreaterThan(100);
    expect(sw!.n % 10).toBe(0);
    expect(batched.alphaPerPair).toBeCloseTo(0.05 / 3, 15);
    // Replaying the same rows in the same batches decides the same.
    const again = new AdaptiveDecision({ models: ['strong', 'weak', 'twin'], population: 300, alpha: 0.05, margin: 0.1 });
    for (let lo = 0; lo < 300 && !again.done(); lo += 10) again.addBatch(data.slice(lo, lo + 10));
    expect(again.decisions()).toEqual(batched.decisions());
  });

  it('leaves a close pair undecided when the manifest is spent, and keeps its models in contention until then', () => {
    const r = rng(9);
    const data = rows(100, { a: () => (r() < 0.61 ? 1 : 0), b: () => (r() < 0.6 ? 1 : 0) });
    const d = new AdaptiveDecision({ models: ['a', 'b'], population: 100, alpha: 0.05, margin: 0 });
    d.addBatch(data.slice(0, 50));
    expect(d.inContention()).toEqual(['a', 'b']);
    d.addBatch(data.slice(50));
    expect(d.done()).toBe(true);
    expect(d.decisions()[0]).toMatchObject({ status: 'undecided', n: 100, open: false });
  });

  it('a seeded order is a permutation fixed by its seed', () => {
    const o = seededOrder(1000, 12345);
    expect([...o].sort((x, y) => x - y)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect([...seededOrder(1000, 12345)]).toEqual([...o]);
    expect([...seededOrder(1000, 12346)]).not.toEqual([...o]);
  });
});
