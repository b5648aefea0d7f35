/**
 * Planning against scipy and against simulation (scripts/decision-reference.py writes the
 * fixture): Miller's and McNemar's sample sizes, the variance components of guesses and of a pilot,
 * the achieved power of simulated sweeps at the planned sizes, and the plan's grid, costs, cheapest
 * design and too-small verdict.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildPlan, type PlanInput } from '../../core/scoring/plan.js';
import { componentsFromGuess, componentsFromPilot, mcnemarVignettes, millerVignettes, minimumDetectable, vignettesNeeded } from '../../core/scoring/power.js';
import { casesOf } from '../helpers/fixture-cases.js';

interface Components { between: number; within: number; discordance: number }
const fixture = JSON.parse(readFileSync('test/scoring/fixtures/decision.json', 'utf8')) as {
  planning: {
    formula: { between: number; within: number; delta: number; alpha: number; power: number; pairs: number; miller: Record<string, number> }[];
    mcnemar: { psi: number; delta: number; alpha: number; power: number; pairs: number; n: number }[];
    guess: { accuracyA: number; accuracyB: number; flipRateA: number; flipRateB: number; correlation: number; components: Components }[];
    pilot: { a: number[][]; b: number[][]; components: Components };
    simulation: { population: Components; delta: number; alpha: number; power: number; designs: { pairs: number; epochs: number; vignettes: number; achieved_power: number }[] };
  };
};
const P = fixture.planning;

describe('sample sizes against scipy', () => {
  it("Miller's n for K epochs", () => {
    expect.assertions(P.formula.reduce((n, c) => n + Object.keys(c.miller).length, 0));
    for (const c of casesOf(P.formula, 'formula')) {
      for (const [k, n] of Object.entries(c.miller)) {
        expect(millerVignettes({ between: c.between, within: c.within, discordance: null }, Number(k), c)).toBeCloseTo(n, 9);
      }
    }
  });

  it("McNemar's n for one pass/fail epoch", () => {
    expect.assertions(P.mcnemar.length + 1);
    for (const c of casesOf(P.mcnemar, 'mcnemar')) expect(mcnemarVignettes(c.psi, c)).toBeCloseTo(c.n, 9);
    expect(() => mcnemarVignettes(0.05, { delta: 0.1, alpha: 0.05, power: 0.8, pairs: 1 })).toThrow(/disagree at least that often/);
  });

  it('the minimum detectable difference inverts n', () => {
    const v = { between: 0.05, within: 0.2, discordance: 0.3 };
    const d = { alpha: 0.05, power: 0.8, pairs: 2 };
    for (const k of [1, 2, 5]) {
      const mde = minimumDetectable(v, k, 400, d)!;
      const n = k === 1 ? mcnemarVignettes(0.3, { ...d, delta: mde }) : millerVignettes(v, k, { ...d, delta: mde });
      expect(n).toBeCloseTo(400, 6);
    }
    expect(minimumDetectable(v, 1, 3, d)).toBeNull();
  });

  it('the components of guesses and of a pilot', () => {
    expect.assertions(3 * P.guess.length + 4);
    for (const g of casesOf(P.guess, 'guess')) {
      const c = componentsFromGuess(g);
      expect(c.between).toBeCloseTo(g.components.between, 12);
      expect(c.within).toBeCloseTo(g.components.within, 12);
      expect(c.discordance!).toBeCloseTo(g.components.discordance, 12);
    }
    expect(() => componentsFromGuess({ accuracyA: 0.9, accuracyB: 0.5, flipRateA: 0.5, flipRateB: 0, correlation: 0 })).toThrow(/flip rate of 0.5 is impossible at accuracy 0.9/);
    const pilot = componentsFromPilot(P.pilot.a.map((a, i) => ({ a, b: P.pilot.b[i]! })), true);
    expect(pilot.between).toBeCloseTo(P.pilot.components.between, 12);
    expect(pilot.within).toBeCloseTo(P.pilot.components.within, 12);
    expect(pilot.discordance!).toBeCloseTo(P.pilot.components.discordance, 12);
  });
});

describe('planned sizes against simulation', () => {
  it('simulated sweeps at the planned n reach the power within a few points', () => {
    const s = P.simulation;
    expect.assertions(2 * s.designs.length);
    for (const d of casesOf(s.designs, 'simulated design')) {
      expect(vignettesNeeded(s.population, d.epochs, { delta: s.delta, alpha: s.alpha, power: s.power, pairs: d.pairs })).toBe(d.vignettes);
      expect(Math.abs(d.achieved_power - s.power)).toBeLessThan(0.04);
    }
  });
});

describe('the plan', () => {
  const base = (manifest: number | null): PlanInput => ({
    models: ['a', 'b', 'c'],
    pairs: [
      { a: 'a', b: 'b', components: componentsFromGuess({ accuracyA: 0.8, accuracyB: 0.7, flipRateA: 0.2, flipRateB: 0.2, correlation: 0.5 }) },
      { a: 'a', b: 'c', components: componentsFromGuess({ accuracyA: 0.8, accuracyB: 0.6, flipRateA: 0.2, flipRateB: 0.2, correlation: 0.5 }) },
      { a: 'b', b: 'c', components: componentsFromGuess({ accuracyA: 0.7, accuracyB: 0.6, flipRateA: 0.2, flipRateB: 0.2, correlation: 0.5 }) },
    ],
    design: { delta: 0.1, alpha: 0.05, power: 0.8 },
    epochs: [1, 2, 3, 5],
    manifestVignettes: manifest,
    costs: ['a', 'b', 'c'].map((model) => ({ model, inputTokens: 100, outputTokens: 50, price: { inputPerMTok: 1, outputPerMTok: 4 }, provider: model === 'c' ? 'slow' : 'fast' })),
    judges: [{ model: 'j', provider: 'fast', callsPerRecord: 1, costPerRecord: 0.0001, tokensPerRecord: 300 }],
    pace: [{ provider: 'fast', callsPerSecond: 10, basis: 'test' }, { provider: 'slow', callsPerSecond: 1, basis: 'test' }],
    source: 'guesses',
    notes: [],
  });

  it('grids epochs, costs each design with its judges and pacing, and marks the cheapest', () => {
    const plan = buildPlan(base(10_000));
    expect(plan.alpha_per_pair).toBeCloseTo(0.05 / 3, 15);
    expect(plan.designs.map((d) => d.epochs)).toEqual([1, 2, 3, 5]);
    for (const d of plan.designs) {
      expect(d.vignettes).toBe(Math.max(...d.pair_vignettes));
      expect(d.calls).toBe(d.vignettes * d.epochs * 3);
      expect(d.judge_calls).toBe(d.calls);
      expect(d.tokens).toBe(d.calls * 150 + d.calls * 300);
      expect(d.cost_usd!).toBeCloseTo(d.calls * (100e-6 + 200e-6) + d.calls * 0.0001, 9);
      // The slow provider's one model: its n·K calls at 1 a second; the fast one's two models and every judge call at 10.
      expect(d.wall_seconds).toBeCloseTo(Math.max(d.vignettes * d.epochs, (2 * d.vignettes * d.epochs + d.judge_calls) / 10), 9);
    }
    // McNemar for K = 1; more epochs need fewer vignettes but cost more calls here (the flip rate is low).
    expect(plan.designs[0]!.formula).toBe('mcnemar');
    expect(plan.designs[1]!.vignettes).toBeLessThan(plan.designs[0]!.vignettes * 2);
    const cheapest = plan.designs.filter((d) => d.cheapest);
    expect(cheapest).toHaveLength(1);
    expect(cheapest[0]!.cost_usd).toBe(Math.min(...plan.designs.map((d) => d.cost_usd!)));
    expect(plan.too_small).toBe(false);
    for (const m of plan.mde_at_manifest) expect(m.mde).toBeGreaterThan(0);
  });

  it('says plainly when the manifest is too small, even with unlimited epochs', () => {
    const plan = buildPlan(base(50));
    expect(plan.too_small).toBe(true);
    expect(plan.designs.every((d) => !d.feasible && !d.cheapest)).toBe(true);
    expect(plan.notes.at(-1)).toMatch(/^the manifest is too small to detect 0\.1 at all: 50 vignettes, and even with unlimited epochs \d+ are needed/);
    expect(plan.mde_at_manifest[3]!.mde).toBeGreaterThan(0.1);
  });
});
