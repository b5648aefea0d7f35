/**
 * The statistics of a score report, as pure numerics over plain arrays: the mean with its t
 * interval (and the clustered one, CR2 from cluster-robust.ts), epoch reducers, pass@k and pass^k,
 * flip rate, the paired comparison of two models (paired t, exact McNemar, Holm) with its minimum
 * detectable difference (detectable-difference.ts), the epoch noise share and Krippendorff's alpha. Pass-rate
 * intervals (Wilson, Tango) are in proportion-intervals.ts. Each is checked against scipy/statsmodels to 1e-9
 * (scripts/stats-reference.py makes the fixtures). Every function here is one O(n) pass or a sort,
 * so the report can call it on 100,000 vignettes without holding the event loop; the report does
 * the streaming and the yielding. docs/reference/statistics.md says what each figure means.
 * Runs on: Node (core); pure, no I/O.
 */
import binomialCdf from '@stdlib/stats-base-dists-binomial-cdf';
import tCdfImpl from '@stdlib/stats-base-dists-t-cdf';
import tQuantileImpl from '@stdlib/stats-base-dists-t-quantile';
import { cr2Mean, DOMINANT_CLUSTER_SHARE, enoughClusters } from './cluster-robust.js';
import { minimumDetectableDiff } from './detectable-difference.js';
import type { EpochReducer } from './report-shape.js';

/** Student's t quantile: the x with P(T ≤ x) = p for df degrees of freedom (df > 0). */
export function tQuantile(p: number, df: number): number {
  return tQuantileImpl(p, df);
}

/** Student's t cumulative distribution: P(T ≤ t) for df degrees of freedom (df > 0). */
export function tCdf(t: number, df: number): number {
  return tCdfImpl(t, df);
}

/*
 * mean, sampleVariance, reduceEpochs and epochNoise read the first `n` values (all by default), so
 * the report's hot loops can pass one scratch array instead of allocating a view per vignette.
 */

export function mean(xs: ArrayLike<number>, n = xs.length): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += xs[i]!;
  return s / n;
}

/** Sample variance (n − 1 in the denominator), two-pass for accuracy; NaN when n < 2. */
export function sampleVariance(xs: ArrayLike<number>, n = xs.length): number {
  if (n < 2) return NaN;
  const m = mean(xs, n);
  let ss = 0;
  for (let i = 0; i < n; i++) {
    const d = xs[i]! - m;
    ss += d * d;
  }
  return ss / (n - 1);
}

/** A mean with its standard error and two-sided 95 % t interval; the last two null when n < 2. */
export interface MeanInterval {
  n: number;
  mean: number;
  stderr: number | null;
  ci95: [number, number] | null;
  /** Degrees of freedom of the t used for ci95 (n − 1, or clusters − 1); null with the interval. */
  df: number | null;
}

function interval(n: number, m: number, se: number, df: number): MeanInterval {
  if (!(df >= 1) || !Number.isFinite(se)) return { n, mean: m, stderr: null, ci95: null, df: null };
  const h = tQuantile(0.975, df) * se;
  return { n, mean: m, stderr: se, ci95: [m - h, m + h], df };
}

/** mean ± t(0.975, n − 1) · sd/√n. */
export function meanInterval(xs: ArrayLike<number>): MeanInterval {
  const n = xs.length;
  const m = n > 0 ? mean(xs) : NaN;
  return interval(n, m, Math.sqrt(sampleVariance(xs) / n), n - 1);
}

/** A clustered mean: the interval, and what the clustering rests on. */
export interface ClusteredMeanInterval extends MeanInterval {
  clusters: number;
  /** The largest cluster's share of the values. */
  largestShare: number;
  /** The unclustered standard error was used: CR2 was below it where CR2 is not trusted (see clusteredMeanInterval). */
  floored: boolean;
  /** Fewer than MIN_CLUSTER_DF degrees of freedom (or one cluster): no interval, "too few clusters". */
  tooFewClusters: boolean;
}

/**
 * The mean with a cluster-robust standard error: vignettes sharing a metadata value (a cluster) are
 * not independent evidence. CR2 with Bell-McCaffrey degrees of freedom (cluster-robust.ts), which
 * covers as it should with few clusters when none dominates (with C equal clusters it is the t
 * interval over the C cluster means). Where it is known not to hold it is floored at the
 * unclustered standard error: when one cluster holds more than half the values (its leverage
 * correction 1/(1 − p_g) and the degrees of freedom then rest on the few others; the report warns),
 * and when it is zero or rounding noise on data that vary (equal cluster means). A hard floor
 * everywhere made every clustered interval conservative (95-100 % coverage in simulation).
 * No interval (stderr, ci95 and df null, `tooFewClusters`) below MIN_CLUSTER_DF degrees of freedom,
 * one cluster included: the data hold too few independent clusters for one.
 */
export function clusteredMeanInterval(xs: ArrayLike<number>, cluster: ArrayLike<number>): ClusteredMeanInterval {
  const n = xs.length;
  const cr = cr2Mean(xs, cluster);
  const m = n > 0 ? mean(xs) : NaN;
  const iid = Math.sqrt(sampleVariance(xs) / n);
  const untrusted = cr.largestShare > DOMINANT_CLUSTER_SHARE || negligibleStderr(cr.stderr, m);
  const floored = untrusted && Number.isFinite(iid) && Number.isFinite(cr.stderr) && cr.stderr < iid;
  const se = floored ? iid : cr.stderr;
  const about = { clusters: cr.clusters, largestShare: cr.largestShare, floored };
  if (!enoughClusters(cr.df)) return { n, mean: m, stderr: null, ci95: null, df: null, ...about, tooFewClusters: true };
  return { ...interval(n, m, se, cr.df), ...about, tooFewClusters: false };
}

/**
 * How a vignette's epoch scores become its one value x_i. `mean`: their mean. `majority`: their
 * median, which on pass/fail values is the majority vote (a tie of an even K gives 0.5) and on
 * graded values the middle score. `max`: the best epoch (the optimist's "any epoch got it").
 * `values` must not be empty.
 */
export function reduceEpochs(values: ArrayLike<number>, reducer: EpochReducer, k = values.length): number {
  if (k === 0) throw new RangeError('reduceEpochs: no values');
  switch (reducer) {
    case 'mean':
      return mean(values, k);
    case 'max': {
      let best = -Infinity;
      for (let i = 0; i < k; i++) if (values[i]! > best) best = values[i]!;
      return best;
    }
    case 'majority': {
      const sorted = new Float64Array(k);
      for (let i = 0; i < k; i++) sorted[i] = values[i]!;
      sorted.sort();
      const mid = k >> 1;
      return k % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
    }
  }
}

/**
 * pass@k and pass^k of a vignette with c passes in K epochs, for every k = 1..K at once, written to
 * `at[k − 1]` and `hat[k − 1]`. pass@k is the unbiased 1 − C(K−c, k)/C(K, k), the chance that at
 * least one of k epochs drawn without replacement passes; pass^k is C(c, k)/C(K, k), the chance that
 * all k pass. Each ratio of binomials is a running product (C(K−c, k)/C(K, k) is the previous one
 * times (K−c−k+1)/(K−k+1)), so the whole curve costs O(K) and never overflows.
 */
export function passCurves(epochs: number, passes: number, at: Float64Array, hat: Float64Array): void {
  if (!(Number.isInteger(epochs) && Number.isInteger(passes) && epochs >= 1 && passes >= 0 && passes <= epochs)) {
    throw new RangeError(`passCurves needs integers K ≥ 1 and 0 ≤ c ≤ K, got K=${epochs} c=${passes}`);
  }
  if (at.length < epochs || hat.length < epochs) throw new RangeError(`passCurves needs room for ${epochs} values`);
  let allFail = 1;
  let allPass = 1;
  for (let k = 1; k <= epochs; k++) {
    allFail *= Math.max(0, epochs - passes - k + 1) / (epochs - k + 1);
    allPass *= Math.max(0, passes - k + 1) / (epochs - k + 1);
    at[k - 1] = 1 - allFail;
    hat[k - 1] = allPass;
  }
}

/** A vignette's flip rate: 2c(K−c)/(K(K−1)), the chance two of its epochs disagree; K ≥ 2. */
export function flipRate(epochs: number, passes: number): number {
  if (!(Number.isInteger(epochs) && Number.isInteger(passes) && epochs >= 2 && passes >= 0 && passes <= epochs)) {
    throw new RangeError(`flipRate needs integers K ≥ 2 and 0 ≤ c ≤ K, got K=${epochs} c=${passes}`);
  }
  return (2 * passes * (epochs - passes)) / (epochs * (epochs - 1));
}

/** The paired comparison of two models over the vignettes both answered. */
export interface PairedTest {
  n: number;
  /** Mean of d_i. */
  diff: number;
  /** sd(d)/√n; null when n < 2. */
  stderr: number | null;
  ci95: [number, number] | null;
  /**
   * Two-sided paired t p-value. When every d_i is the same (sd = 0) the t statistic is 0/0 or ±∞:
   * p is 1 if they are all zero (no difference at all), else the exact sign test's 2 · 2^−n (every
   * one of n differences has the same sign; n the clusters when clustered), and the interval is
   * null. Null when n < 2, or clustered over too few clusters.
   */
  p_value: number | null;
  /** The smallest true difference the t test finds with 80 % power (noncentral t, detectable-difference.ts); null when n < 2. */
  min_detectable_diff: number | null;
  /** Clustered over too few clusters for an interval (MIN_CLUSTER_DF): no p, no interval. */
  tooFewClusters?: true;
}

/**
 * A standard error that is zero or rounding noise: every value the same up to the last bits (a
 * constant difference of 0.03 computed as 0.8 − 0.77 varies by 1e-17). A t statistic on it would be
 * 1e15 and its p 1e-170, a certainty the data do not hold.
 */
export function negligibleStderr(stderr: number, m: number): boolean {
  return stderr <= 1e-12 * Math.max(1, Math.abs(m));
}

/**
 * Paired t on the differences d_i = x_(a,i) − x_(b,i). With `cluster` (each d_i's cluster index,
 * from a metadata key) the standard error and degrees of freedom are the clustered ones, as for a
 * single model's mean, and so is the p-value: the interval and the p always come from one method.
 */
export function pairedTTest(d: ArrayLike<number>, cluster?: ArrayLike<number>): PairedTest {
  const clustered = cluster ? clusteredMeanInterval(d, cluster) : null;
  const iv = clustered ?? meanInterval(d);
  if (iv.stderr === null || iv.df === null) {
    return { n: iv.n, diff: iv.mean, stderr: null, ci95: null, p_value: null, min_detectable_diff: null, ...(clustered?.tooFewClusters ? { tooFewClusters: true } : {}) };
  }
  if (negligibleStderr(iv.stderr, iv.mean)) {
    // The sign test counts independent units: the clusters when clustered, not their vignettes.
    const units = clustered?.clusters ?? iv.n;
    const p = Math.abs(iv.mean) <= 1e-12 ? 1 : Math.min(1, 2 * 0.5 ** units);
    return { n: iv.n, diff: iv.mean, stderr: 0, ci95: null, p_value: p, min_detectable_diff: 0 };
  }
  return {
    n: iv.n,
    diff: iv.mean,
    stderr: iv.stderr,
    ci95: iv.ci95,
    p_value: Math.min(1, 2 * tCdf(-Math.abs(iv.mean / iv.stderr), iv.df)),
    min_detectable_diff: minimumDetectableDiff(iv.stderr, iv.df),
  };
}

/**
 * Exact McNemar test (two-sided) for pass/fail pairs with one epoch: b vignettes where only a
 * passed, c where only b passed; p = min(1, 2 · P(Bin(b + c, ½) ≤ min(b, c))). 1 when b + c = 0.
 */
export function mcnemarExact(b: number, c: number): number {
  if (!(Number.isInteger(b) && Number.isInteger(c) && b >= 0 && c >= 0)) {
    throw new RangeError(`mcnemarExact needs non-negative integer counts, got b=${b} c=${c}`);
  }
  return Math.min(1, 2 * binomialCdf(Math.min(b, c), b + c, 0.5));
}

/**
 * Holm's step-down adjustment across a family of p-values: sorted ascending, the j-th (from 0) is
 * multiplied by (m − j), made non-decreasing and capped at 1. Nulls (tests that could not be made)
 * are not part of the family and stay null.
 */
export function holm(ps: readonly (number | null)[]): (number | null)[] {
  const idx: number[] = [];
  ps.forEach((p, i) => {
    if (p !== null && Number.isFinite(p)) idx.push(i);
  });
  idx.sort((i, j) => ps[i]! - ps[j]!);
  const out: (number | null)[] = ps.map(() => null);
  const m = idx.length;
  let running = 0;
  idx.forEach((i, j) => {
    running = Math.max(running, Math.min(1, (m - j) * ps[i]!));
    out[i] = running;
  });
  return out;
}

/**
 * The share of Var(x) that is epoch noise: (mean over vignettes of s_i²/K_i) / Var(x), with s_i²
 * the sample variance of vignette i's epoch scores and x_i their mean. Near 1: the epochs disagree
 * with each other as much as the vignettes differ, so more epochs would tighten the interval; near
 * 0: the spread is between vignettes, so only more vignettes would. Estimated, so capped at 1.
 * `noise[i]` is s_i²/K_i, NaN for a vignette with fewer than two epochs (left out of the mean).
 * Null when no vignette has two epochs or Var(x) is 0.
 */
export function epochNoiseShare(xs: ArrayLike<number>, noise: ArrayLike<number>): number | null {
  let sum = 0;
  let count = 0;
  for (let i = 0; i < noise.length; i++) {
    if (!Number.isNaN(noise[i]!)) {
      sum += noise[i]!;
      count++;
    }
  }
  const v = sampleVariance(xs);
  if (count === 0 || !(v > 0)) return null;
  return Math.min(1, sum / count / v);
}

/** s²/K of one vignette's epoch scores (the variance of their mean); NaN with fewer than two. */
export function epochNoise(values: ArrayLike<number>, k = values.length): number {
  return sampleVariance(values, k) / k;
}

/**
 * Krippendorff's alpha: how far judges (coders) agree beyond chance, 1 − D_o/D_e, over units (the
 * scored responses) each with one value per judge or null where a judge gave none. Units with
 * fewer than two values carry no pairs and are left out. `interval`: squared difference of values;
 * `nominal`: values agree only when equal. Both are closed forms of the coincidence-matrix
 * definition (n pairable values, m_u values in unit u): interval α = 1 − (n−1)/n · Σ_u (m_u/(m_u−1))
 * SS_u / SS, with SS_u the squared deviations within unit u and SS those from the grand mean;
 * nominal as written below. docs/reference/statistics.md derives them.
 * Null when fewer than two pairable values exist or every value is the same (D_e = 0).
 */
export function krippendorffAlpha(units: readonly (readonly (number | null)[])[], level: 'interval' | 'nominal'): number | null {
  // Pairable values only: units with two or more values.
  const pairable: number[][] = [];
  for (const u of units) {
    const vals = u.filter((v): v is number => v !== null && v !== undefined && !Number.isNaN(v));
    if (vals.length >= 2) pairable.push(vals);
  }
  let n = 0;
  for (const u of pairable) n += u.length;
  if (n < 2) return null;
  if (level === 'interval') {
    let total = 0;
    for (const u of pairable) for (const v of u) total += v;
    const grand = total / n;
    let ssAll = 0;
    let within = 0;
    for (const u of pairable) {
      const m = mean(u);
      let ss = 0;
      for (const v of u) {
        ssAll += (v - grand) * (v - grand);
        ss += (v - m) * (v - m);
      }
      within += (u.length * ss) / (u.length - 1);
    }
    if (ssAll === 0) return null;
    return 1 - ((n - 1) / n) * (within / ssAll);
  }
  // Nominal: D_o = (1/n) Σ_u (m_u² − Σ_v n_uv²)/(m_u − 1); D_e = (n² − Σ_v n_v²)/(n(n − 1)).
  const overall = new Map<number, number>();
  let observed = 0;
  for (const u of pairable) {
    const counts = new Map<number, number>();
    for (const v of u) counts.set(v, (counts.get(v) ?? 0) + 1);
    let sq = 0;
    for (const [v, c] of counts) {
      sq += c * c;
      overall.set(v, (overall.get(v) ?? 0) + c);
    }
    observed += (u.length * u.length - sq) / (u.length - 1);
  }
  let sqAll = 0;
  for (const c of overall.values()) sqAll += c * c;
  const expected = (n * n - sqAll) / (n * (n - 1));
  if (expected === 0) return null;
  return 1 - observed / n / expected;
}
