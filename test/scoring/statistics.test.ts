/**
 * Every statistic of the score report against an independent implementation: the fixtures were
 * made by scipy and statsmodels (scripts/stats-reference.py), and each value must agree to 1e-9
 * (relative to the value's size once it exceeds 1, as for t quantiles in the far tails). Covers
 * ties, n = 2, all-equal scores, clustered standard errors, exact McNemar for K = 1, Holm with ties,
 * Krippendorff's alpha with missing values; then the degenerate inputs the fixtures cannot express.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  clusteredMeanInterval,
  epochNoise,
  epochNoiseShare,
  flipRate,
  holm,
  krippendorffAlpha,
  mcnemarExact,
  meanInterval,
  pairedTTest,
  passCurves,
  reduceEpochs,
  tCdf,
  tQuantile,
} from '../../core/scoring/statistics.js';
import { cr2Mean } from '../../core/scoring/cluster-robust.js';
import { casesOf } from '../helpers/fixture-cases.js';

interface Fixture {
  t_quantile: { p: number; df: number; q: number }[];
  t_cdf: { t: number; df: number; cdf: number }[];
  mean_interval: { name: string; xs: number[]; mean: number; stderr: number; ci95: [number, number] }[];
  clustered: {
    name: string;
    xs: number[];
    clusters: number[];
    mean: number;
    cr2_stderr: number;
    bm_df: number;
    largest_share: number;
    floored: boolean;
    /** Under 3 Bell-McCaffrey degrees of freedom: no interval (the next three null). */
    too_few_clusters: boolean;
    stderr: number | null;
    ci95: [number, number] | null;
    df: number | null;
  }[];
  paired: {
    name: string;
    a: number[];
    b: number[];
    n: number;
    diff: number;
    stderr: number;
    ci95: [number, number];
    p_value: number | null;
    min_detectable_diff: number;
  }[];
  clustered_paired: {
    name: string;
    a: number[];
    b: number[];
    clusters: number[];
    n: number;
    diff: number;
    too_few_clusters: boolean;
    stderr: number | null;
    ci95: [number, number] | null;
    p_value: number | null;
    min_detectable_diff: number | null;
  }[];
  mcnemar: { b: number; c: number; p_value: number }[];
  holm: { p: number[]; p_holm: number[] }[];
  pass_k: { K: number; c: number; k: number; pass_at_k: number; pass_hat_k: number }[];
  flip_rate: { K: number; c: number; flip_rate: number }[];
  reducers: { values: number[]; mean: number; majority: number; max: number }[];
  epoch_noise_share: { name: string; rows: number[][]; share: number | null }[];
  krippendorff: { name: string; units: (number | null)[][]; interval: number | null; nominal: number | null }[];
}

const fx = JSON.parse(readFileSync(new URL('./fixtures/statistics.json', import.meta.url), 'utf8')) as Fixture;

/** Agreement to 1e-9, relative once |expected| > 1. */
function close(actual: number | null | undefined, expected: number | null, what: string): void {
  if (expected === null) {
    expect(actual, what).toBeNull();
    return;
  }
  expect(actual, what).not.toBeNull();
  expect(actual, what).not.toBeUndefined();
  const tol = 1e-9 * Math.max(1, Math.abs(expected));
  expect(Math.abs(actual! - expected), `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(tol);
}

describe('the t distribution', () => {
  it('quantiles match scipy.stats.t.ppf', () => {
    for (const c of casesOf(fx.t_quantile, 't_quantile')) close(tQuantile(c.p, c.df), c.q, `t.ppf(${c.p}, ${c.df})`);
  });
  it('the CDF matches scipy.stats.t.cdf', () => {
    for (const c of casesOf(fx.t_cdf, 't_cdf')) close(tCdf(c.t, c.df), c.cdf, `t.cdf(${c.t}, ${c.df})`);
  });
});

describe('meanInterval', () => {
  it.each(casesOf(fx.mean_interval, 'mean_interval').map((c) => [c.name, c] as const))('%s: mean, sem and t interval match scipy', (_, c) => {
    const r = meanInterval(c.xs);
    expect(r.n).toBe(c.xs.length);
    close(r.mean, c.mean, 'mean');
    close(r.stderr, c.stderr, 'stderr');
    close(r.ci95![0], c.ci95[0], 'ci lo');
    close(r.ci95![1], c.ci95[1], 'ci hi');
    expect(r.df).toBe(c.xs.length - 1);
  });

  it('has no interval for one vignette or none', () => {
    expect(meanInterval([0.4])).toEqual({ n: 1, mean: 0.4, stderr: null, ci95: null, df: null });
    const empty = meanInterval([]);
    expect(empty.n).toBe(0);
    expect(empty.ci95).toBeNull();
  });
});

describe('clusteredMeanInterval', () => {
  it.each(casesOf(fx.clustered, 'clustered').map((c) => [c.name, c] as const))('%s: CR2 and Bell-McCaffrey df match their matrix definition', (_, c) => {
    const raw = cr2Mean(c.xs, c.clusters);
    close(raw.stderr, c.cr2_stderr, 'CR2 stderr');
    close(raw.df, c.bm_df, 'BM df');
    close(raw.largestShare, c.largest_share, 'largest share');
    const r = clusteredMeanInterval(c.xs, c.clusters);
    close(r.mean, c.mean, 'mean');
    close(r.stderr, c.stderr, 'stderr');
    close(r.ci95?.[0] ?? null, c.ci95?.[0] ?? null, 'ci lo');
    close(r.ci95?.[1] ?? null, c.ci95?.[1] ?? null, 'ci hi');
    close(r.df, c.df, 'df');
    expect(r.floored).toBe(c.floored);
    expect(r.tooFewClusters).toBe(c.too_few_clusters);
  });

  it('the fixtures hold both sides of the too-few-clusters line, and a dominant cluster with an interval', () => {
    expect(fx.clustered.filter((c) => c.too_few_clusters).map((c) => c.name)).toEqual(['two clusters', 'unequal sizes, a singleton', 'one cluster holds most vignettes']);
    const dominant = fx.clustered.find((c) => c.name === 'one cluster of 51 in 100, the rest single')!;
    expect(dominant.largest_share).toBeGreaterThan(0.5);
    expect(dominant.too_few_clusters).toBe(false);
  });

  it('keeps a CR2 below the unclustered SE when no cluster dominates, and floors it when one holds most values', () => {
    // Six clusters whose means barely differ: CR2 is far below the unclustered SE, and stands.
    const rows = [[0.1, 0.5, 0.9], [0.2, 0.5, 0.9], [0.1, 0.6, 0.9], [0.1, 0.5, 0.8], [0.0, 0.5, 0.9], [0.1, 0.4, 0.9]];
    const xs = rows.flat();
    const balanced = clusteredMeanInterval(xs, rows.flatMap((r, g) => r.map(() => g)));
    expect(balanced.stderr!).toBeLessThan(meanInterval(xs).stderr! / 2);
    expect(balanced.floored).toBe(false);
    // One cluster of 51 in 100 holding the spread, 49 singletons at the mean: CR2 alone would be a tenth of the unclustered SE.
    const ys = [...Array.from({ length: 51 }, (_, i) => i % 2), ...Array.from({ length: 49 }, () => 0.5)];
    const groups = [...Array.from({ length: 51 }, () => 0), ...Array.from({ length: 49 }, (_, i) => i + 1)];
    expect(cr2Mean(ys, groups).stderr).toBeLessThan(meanInterval(ys).stderr! / 5);
    const dominated = clusteredMeanInterval(ys, groups);
    expect(dominated.tooFewClusters).toBe(false);
    expect(dominated.floored).toBe(true);
    close(dominated.stderr, meanInterval(ys).stderr, 'floored at the unclustered SE');
  });

  it('gives no interval under three degrees of freedom: two or three clusters, or one holding most vignettes', () => {
    const xs = [0.1, 0.5, 0.9, 0.3, 0.7, 1.0, 0.0, 0.2, 0.6];
    for (const groups of [[0, 0, 0, 0, 1, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1, 2, 2, 2], [0, 0, 0, 0, 0, 0, 1, 2, 3]]) {
      const r = clusteredMeanInterval(xs, groups);
      expect(r.tooFewClusters).toBe(true);
      expect([r.stderr, r.ci95, r.df]).toEqual([null, null, null]);
      expect(pairedTTest(xs.map((x) => x - 0.2), groups)).toMatchObject({ p_value: null, ci95: null, tooFewClusters: true });
    }
    // Four even clusters give exactly 3 (computed a hair below it): an interval.
    expect(clusteredMeanInterval([...xs, 0.4, 0.8, 0.5], [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]).tooFewClusters).toBe(false);
  });

  it('never reports a clustered SE that is 0 on data that vary: equal cluster means are floored', () => {
    const xs = [0, 1, 0, 1, 1, 0, 0.5, 0.5];
    expect(cr2Mean(xs, [0, 0, 1, 1, 2, 2, 3, 3]).stderr).toBeLessThan(1e-12);
    const r = clusteredMeanInterval(xs, [0, 0, 1, 1, 2, 2, 3, 3]);
    close(r.stderr, meanInterval(xs).stderr, 'floored at the unclustered SE');
    expect(r.ci95![1] - r.ci95![0]).toBeGreaterThan(0.5);
  });

  it('has no interval with a single cluster, and refuses mismatched labels', () => {
    const r = clusteredMeanInterval([0.1, 0.9, 0.5], [4, 4, 4]);
    expect(r.stderr).toBeNull();
    expect(r.ci95).toBeNull();
    expect(r.clusters).toBe(1);
    expect(() => clusteredMeanInterval([0.1, 0.2], [1])).toThrow(/2 values but 1 cluster labels/);
  });
});

describe('pairedTTest', () => {
  it.each(casesOf(fx.paired, 'paired').map((c) => [c.name, c] as const))('%s: matches scipy.stats.ttest_rel', (_, c) => {
    const d = c.a.map((a, i) => a - c.b[i]!);
    const r = pairedTTest(d);
    expect(r.n).toBe(c.n);
    close(r.diff, c.diff, 'diff');
    close(r.stderr, c.stderr, 'stderr');
    if (c.stderr < 1e-12) {
      // Every d_i the same (up to rounding): no interval rather than a point (tested below).
      expect(r.ci95).toBeNull();
      return;
    }
    close(r.ci95![0], c.ci95[0], 'ci lo');
    close(r.ci95![1], c.ci95[1], 'ci hi');
    close(r.min_detectable_diff, c.min_detectable_diff, 'mdd');
    if (c.p_value !== null) close(r.p_value, c.p_value, 'p');
  });

  it('calls identical models indistinguishable (p = 1) where scipy gives NaN, and a constant gap by the exact sign test, with no point interval', () => {
    const same = pairedTTest([0, 0, 0, 0]);
    expect(same.p_value).toBe(1);
    expect(same.ci95).toBeNull();
    // Three differences of one sign: 2 · 2^-3, not the t test's "certain" 0.
    expect(pairedTTest([0.5, 0.5, 0.5]).p_value).toBe(0.25);
    expect(pairedTTest([0.5, 0.5, 0.5]).ci95).toBeNull();
  });

  it('has no test for a single shared vignette', () => {
    expect(pairedTTest([0.3])).toEqual({ n: 1, diff: 0.3, stderr: null, ci95: null, p_value: null, min_detectable_diff: null });
  });

  it('gives a minimum detectable difference near 2.8 standard errors at large n', () => {
    const d = Array.from({ length: 10_000 }, (_, i) => (i % 7) / 7 - 0.4);
    const r = pairedTTest(d);
    expect(r.min_detectable_diff! / r.stderr!).toBeCloseTo(2.8016, 3);
  });

  it('gives 16.33 standard errors at n = 2, not the central shortcut 14.08 (noncentral t)', () => {
    const r = pairedTTest([0.2, 0.6]);
    expect(r.min_detectable_diff! / r.stderr!).toBeCloseTo(16.334, 3);
  });
});

describe('pairedTTest clustered by a metadata key', () => {
  it.each(casesOf(fx.clustered_paired, 'clustered_paired').map((c) => [c.name, c] as const))('%s: CR2 on d, its p and its interval from one method', (_, c) => {
    const r = pairedTTest(
      c.a.map((a, i) => a - c.b[i]!),
      c.clusters,
    );
    expect(r.n).toBe(c.n);
    close(r.diff, c.diff, 'diff');
    close(r.stderr, c.stderr, 'stderr');
    close(r.ci95?.[0] ?? null, c.ci95?.[0] ?? null, 'ci lo');
    close(r.ci95?.[1] ?? null, c.ci95?.[1] ?? null, 'ci hi');
    close(r.p_value, c.p_value, 'p');
    close(r.min_detectable_diff, c.min_detectable_diff, 'mdd');
    expect(r.tooFewClusters === true).toBe(c.too_few_clusters);
  });
});

describe('mcnemarExact', () => {
  it('matches statsmodels mcnemar(exact=True)', () => {
    for (const c of casesOf(fx.mcnemar, 'mcnemar')) close(mcnemarExact(c.b, c.c), c.p_value, `mcnemar(${c.b}, ${c.c})`);
  });
  it.each([
    [-1, 2],
    [1.5, 2],
    [NaN, 0],
  ])('refuses the counts %f, %f', (b, c) => {
    expect(() => mcnemarExact(b, c)).toThrow(/non-negative integer counts/);
  });
});

describe('holm', () => {
  it('matches statsmodels multipletests(method="holm"), ties included', () => {
    for (const c of casesOf(fx.holm, 'holm')) {
      const r = holm(c.p);
      c.p_holm.forEach((e, i) => close(r[i], e, `holm(${JSON.stringify(c.p)})[${i}]`));
    }
  });
  it('leaves tests that could not be made out of the family', () => {
    expect(holm([0.01, null, 0.04])).toEqual([0.02, null, 0.04]);
    expect(holm([])).toEqual([]);
  });
});

describe('epoch reducers and consistency', () => {
  it('pass@k and pass^k match the exact binomial ratios for every k at once', () => {
    const at = new Float64Array(12);
    const hat = new Float64Array(12);
    for (const c of casesOf(fx.pass_k, 'pass_k')) {
      passCurves(c.K, c.c, at, hat);
      close(at[c.k - 1], c.pass_at_k, `pass@${c.k} K=${c.K} c=${c.c}`);
      close(hat[c.k - 1], c.pass_hat_k, `pass^${c.k} K=${c.K} c=${c.c}`);
    }
  });
  it('pass@k stays finite and exact for many epochs (no factorial overflow)', () => {
    const at = new Float64Array(2000);
    const hat = new Float64Array(2000);
    passCurves(2000, 1000, at, hat);
    close(at[0], 0.5, 'pass@1');
    close(hat[0], 0.5, 'pass^1');
    expect(at[1000]).toBe(1);
    expect(hat[1000]).toBe(0);
    expect(at.every(Number.isFinite) && hat.every(Number.isFinite)).toBe(true);
  });
  it('flip rate matches 2c(K−c)/(K(K−1))', () => {
    for (const c of casesOf(fx.flip_rate, 'flip_rate')) close(flipRate(c.K, c.c), c.flip_rate, `flip K=${c.K} c=${c.c}`);
  });
  it('reducers match numpy mean, median and max', () => {
    for (const c of casesOf(fx.reducers, 'reducers')) {
      close(reduceEpochs(c.values, 'mean'), c.mean, 'mean');
      close(reduceEpochs(c.values, 'majority'), c.majority, 'majority');
      close(reduceEpochs(c.values, 'max'), c.max, 'max');
    }
  });
  it.each([
    [3, 4],
    [0, 0],
    [2.5, 1],
    [3, -1],
    [NaN, 1],
  ])('pass curves refuse K=%f c=%f', (K, c) => {
    expect(() => passCurves(K, c, new Float64Array(8), new Float64Array(8))).toThrow(RangeError);
  });
  it('refuses a flip rate with one epoch and reducing no epochs', () => {
    expect(() => flipRate(1, 1)).toThrow(/K ≥ 2/);
    expect(() => reduceEpochs([], 'mean')).toThrow(/no values/);
  });
});

describe('epochNoiseShare', () => {
  it.each(casesOf(fx.epoch_noise_share, 'epoch_noise_share').map((c) => [c.name, c] as const))('%s: matches the numpy formula', (_, c) => {
    const xs = c.rows.map((r) => reduceEpochs(r, 'mean'));
    const noise = c.rows.map((r) => epochNoise(r));
    close(epochNoiseShare(xs, noise), c.share, 'share');
  });
});

describe('krippendorffAlpha', () => {
  it.each(casesOf(fx.krippendorff, 'krippendorff').map((c) => [c.name, c] as const))('%s: matches the coincidence-matrix definition', (_, c) => {
    close(krippendorffAlpha(c.units, 'interval'), c.interval, 'interval');
    close(krippendorffAlpha(c.units, 'nominal'), c.nominal, 'nominal');
  });
  it('reproduces the published worked example to three places', () => {
    const published = fx.krippendorff[0]!;
    expect(krippendorffAlpha(published.units, 'nominal')!.toFixed(3)).toBe('0.743');
    expect(krippendorffAlpha(published.units, 'interval')!.toFixed(3)).toBe('0.849');
  });
});
