/**
 * The coverage simulation: 1,000 simulated sweeps of `mock-strong` (accuracy 0.8) against
 * `mock-weak` (0.6), each on fresh vignette ids, scored pass/fail by whether the known-accuracy
 * model hit the target and reported by buildScoreReport. The true difference is 0.2, so the 95 %
 * interval of the paired difference must cover it in about 95 % of the sweeps: 93-97 % (the
 * simulation's own sd is 0.7 points). The hits are a pure function of (model, vignette id, epoch),
 * so the figure is the same on every run of this test.
 */
import { describe, expect, it } from 'vitest';
import { answersTarget } from '../../core/models/providers/known-accuracy.js';
import { buildScoreReport, type ScoreCell } from '../../core/scoring/report.js';

const SWEEPS = 1_000;
const VIGNETTES = 60;
const EPOCHS = 3;
const MODELS = [
  { model: 'mock-strong', accuracy: 0.8 },
  { model: 'mock-weak', accuracy: 0.6 },
];

function* sweep(s: number): Generator<ScoreCell> {
  for (let v = 0; v < VIGNETTES; v++) {
    const vignetteId = `sweep-${s}-q${v}`;
    for (let epoch = 1; epoch <= EPOCHS; epoch++) {
      for (const { model, accuracy } of MODELS) {
        const hit = answersTarget(model, vignetteId, epoch, accuracy);
        yield { model, vignetteId, epoch, value: hit ? 1 : 0, passed: hit };
      }
    }
  }
}

describe('coverage of the 95 % interval of a paired difference', () => {
  it('covers the true 0.2 in 93-97 % of 1,000 simulated sweeps, and the means centre on the truth', async () => {
    let covered = 0;
    let strongSum = 0;
    let weakSum = 0;
    let diffSum = 0;
    for (let s = 0; s < SWEEPS; s++) {
      const r = await buildScoreReport(
        { runId: `sim-${s}`, scorer: 'exact', scorerVersion: 'sim', kind: 'pass_fail', epochs: EPOCHS, models: ['mock-strong', 'mock-weak'] },
        sweep(s),
      );
      const pair = r.pairs[0]!;
      expect(pair).toMatchObject({ a: 'mock-strong', b: 'mock-weak', n: VIGNETTES, test: 'paired_t' });
      if (pair.ci95![0] <= 0.2 && 0.2 <= pair.ci95![1]) covered++;
      strongSum += r.models[0]!.mean;
      weakSum += r.models[1]!.mean;
      diffSum += pair.diff;
    }
    const coverage = covered / SWEEPS;
    expect(coverage).toBeGreaterThanOrEqual(0.93);
    expect(coverage).toBeLessThanOrEqual(0.97);
    // Over 180,000 draws per model the means sit within ~0.005 of the accuracies.
    expect(Math.abs(strongSum / SWEEPS - 0.8)).toBeLessThan(0.005);
    expect(Math.abs(weakSum / SWEEPS - 0.6)).toBeLessThan(0.005);
    expect(Math.abs(diffSum / SWEEPS - 0.2)).toBeLessThan(0.005);
  });
});
