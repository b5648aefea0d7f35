/**
 * The intervals and power figures added for honest verdicts, against scripts/stats-reference.py's
 * fixtures (statsmodels' Wilson interval and t-test power, scipy's noncentral t, Tango's paired
 * score interval with its nuisance parameter maximized numerically by scipy): Wilson, Tango, the
 * noncentral-t minimum detectable difference, and Krippendorff's alpha of a pairwise scorer without
 * its baseline's own answers.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { detectableNoncentrality, minimumDetectableDiff } from '../../core/scoring/detectable-difference.js';
import { tangoPairedInterval, wilsonInterval } from '../../core/scoring/proportion-intervals.js';
import { buildScoreReport, type ScoreCell } from '../../core/scoring/report.js';
import { casesOf } from '../helpers/fixture-cases.js';

interface Fixture {
  mde_lambda: { df: number; lambda: number; central: number }[];
  wilson: { passes: number; n: number; ci95: [number, number] }[];
  tango: { only_a: number; only_b: number; n: number; ci95: [number, number] }[];
  alpha_without_baseline: { cells: { model: string; vignette: string; judge: string; value: number }[]; baseline: string; alpha: number; alpha_with_baseline: number };
}

const fx = JSON.parse(readFileSync(new URL('./fixtures/statistics.json', import.meta.url), 'utf8')) as Fixture;

function close(actual: number | null | undefined, expected: number, what: string): void {
  expect(actual, what).not.toBeNull();
  const tol = 1e-9 * Math.max(1, Math.abs(expected));
  expect(Math.abs(actual! - expected), `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(tol);
}

describe('wilsonInterval', () => {
  it.each(casesOf(fx.wilson, 'wilson').map((c) => [`${c.passes}/${c.n}`, c] as const))('%s matches statsmodels proportion_confint(method="wilson")', (_, c) => {
    const r = wilsonInterval(c.passes, c.n)!;
    close(r[0], c.ci95[0], 'lo');
    close(r[1], c.ci95[1], 'hi');
  });
  it('is never a point and never leaves [0, 1]: a perfect model at n = 5 is strictly inside (0, 1]', () => {
    const [lo, hi] = wilsonInterval(5, 5)!;
    expect(lo).toBeGreaterThan(0);
    expect(lo).toBeLessThan(1);
    expect(hi).toBe(1);
    expect(wilsonInterval(0, 0)).toBeNull();
  });
});

describe('tangoPairedInterval', () => {
  it.each(casesOf(fx.tango, 'tango').map((c) => [`${c.only_a}/${c.only_b} of ${c.n}`, c] as const))('%s matches the score interval with a numerically maximized nuisance', (_, c) => {
    const r = tangoPairedInterval(c.only_a, c.only_b, c.n)!;
    // The reference's bounded minimizer is good to about 1e-9 on the nuisance, so 1e-8 here.
    expect(Math.abs(r[0] - c.ci95[0]), `lo ${r[0]} vs ${c.ci95[0]}`).toBeLessThan(1e-8);
    expect(Math.abs(r[1] - c.ci95[1]), `hi ${r[1]} vs ${c.ci95[1]}`).toBeLessThan(1e-8);
  });
  it('has width when the two models agree on every vignette, and stays inside [-1, 1]', () => {
    const [lo, hi] = tangoPairedInterval(0, 0, 10)!;
    expect(lo).toBeLessThan(0);
    expect(hi).toBeGreaterThan(0);
    expect(tangoPairedInterval(0, 12, 12)![0]).toBe(-1);
    expect(tangoPairedInterval(0, 0, 0)).toBeNull();
  });
});

describe('minimumDetectableDiff', () => {
  it.each(casesOf(fx.mde_lambda, 'mde_lambda').map((c) => [c.df, c] as const))('df %f: the noncentrality matches scipy.stats.nct solved for 80 %% power', (_, c) => {
    close(detectableNoncentrality(c.df), c.lambda, `lambda(${c.df})`);
    close(minimumDetectableDiff(0.1, c.df), 0.1 * c.lambda, 'mdd');
  });
  it('is larger than the central shortcut where it matters (n <= 10)', () => {
    for (const c of casesOf(fx.mde_lambda.filter((x) => x.df <= 9), 'mde_lambda at df <= 9')) expect(c.lambda).toBeGreaterThan(c.central + 1e-3);
  });
});

describe("a pairwise scorer's judges' agreement", () => {
  it("leaves out the baseline's own answers (0.5 from every judge by definition)", async () => {
    const f = fx.alpha_without_baseline;
    const cells: ScoreCell[] = f.cells.map((c) => ({ model: c.model, vignetteId: c.vignette, epoch: 1, value: c.value, passed: null, judge: c.judge }));
    const report = await buildScoreReport({ runId: 'r', scorer: 'pw', scorerVersion: 'v', kind: 'graded', epochs: 1, pairwiseBaseline: f.baseline }, cells);
    close(report.judges!.alpha, f.alpha, 'alpha without the baseline');
    expect(f.alpha_with_baseline).not.toBeCloseTo(f.alpha, 3);
    const base = report.models.find((m) => m.model === f.baseline)!;
    expect(base.role).toBe('baseline');
    expect(base.ci95).toBeNull();
  });
});
