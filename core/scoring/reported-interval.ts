/**
 * Which interval a report shows, for a model's mean and for a pair's difference, so each is the
 * one that covers: scores live in [0, 1], and a t interval on them can reach past the ends or
 * collapse to a point (a perfect model's [1, 1]).
 *
 * A model's mean: Wilson's interval when every value is 0 or 1 and nothing is clustered (pass/fail
 * with one epoch, or reduced to 0/1); otherwise the t interval (CR2 when clustered), cut to
 * [0, 1], and Wilson's on the mean when that interval has no width (every value the same). No
 * interval when clustered over too few clusters (MIN_CLUSTER_DF in cluster-robust.ts).
 *
 * A pair: for pass/fail with one epoch, unclustered, the exact McNemar p with Tango's paired score
 * interval; otherwise the paired t (clustered when the report clusters) for both, its interval cut
 * to [-1, 1], the only differences two scores in [0, 1] can have; neither p nor interval when
 * clustered over too few clusters.
 * Runs on: Node (core); pure, no I/O.
 */
import { tangoPairedInterval, wilsonInterval } from './proportion-intervals.js';
import type { IntervalMethod } from './report-shape.js';
import { clusteredMeanInterval, mcnemarExact, meanInterval, negligibleStderr, pairedTTest, type PairedTest } from './statistics.js';

export interface ReportedMean {
  n: number;
  mean: number;
  stderr: number | null;
  ci95: [number, number] | null;
  method: IntervalMethod;
  /** With clusters: how many, and the largest one's share of the vignettes. */
  clusters?: { count: number; largestShare: number };
  /** Clustered over too few clusters for an interval (MIN_CLUSTER_DF): ci95 null, said by the report. */
  tooFewClusters?: true;
}

function allBinary(xs: ArrayLike<number>): boolean {
  for (let i = 0; i < xs.length; i++) if (xs[i] !== 0 && xs[i] !== 1) return false;
  return true;
}

/** The mean of `xs` (values in [0, 1]) with the interval that covers; `cluster` clusters it. */
export function reportedMean(xs: ArrayLike<number>, cluster: ArrayLike<number> | null): ReportedMean {
  const n = xs.length;
  const c = cluster === null ? null : clusteredMeanInterval(xs, cluster);
  const iv = c ?? meanInterval(xs);
  const clusters = c === null ? {} : { clusters: { count: c.clusters, largestShare: c.largestShare } };
  const wilson = (): ReportedMean => ({ n, mean: iv.mean, stderr: iv.stderr, ci95: n > 0 ? wilsonInterval(iv.mean * n, n) : null, method: 'wilson', ...clusters });
  if (n === 0) return { n, mean: iv.mean, stderr: null, ci95: null, method: c ? 'cr2' : 't', ...clusters };
  if (c?.tooFewClusters) return { n, mean: iv.mean, stderr: null, ci95: null, method: 'cr2', ...clusters, tooFewClusters: true };
  if (c === null && allBinary(xs)) return wilson();
  if (iv.ci95 === null || iv.stderr === null || negligibleStderr(iv.stderr, iv.mean)) return wilson();
  return { n, mean: iv.mean, stderr: iv.stderr, ci95: [Math.max(0, iv.ci95[0]), Math.min(1, iv.ci95[1])], method: c ? 'cr2' : 't', ...clusters };
}

/** A pair's test and interval, before Holm: `d` the differences, `a`/`b` the two models' paired values. */
export interface ReportedPair extends PairedTest {
  test: 'paired_t' | 'mcnemar_exact';
  method: IntervalMethod;
}

/**
 * The paired comparison of a and b on their shared vignettes (xa[i], xb[i]). `mcnemar`: pass/fail
 * with one epoch, unclustered; `cluster` clusters the paired t.
 */
export function reportedPair(xa: ArrayLike<number>, xb: ArrayLike<number>, mcnemar: boolean, cluster: ArrayLike<number> | null): ReportedPair {
  const n = xa.length;
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) d[i] = xa[i]! - xb[i]!;
  const t = pairedTTest(d, cluster ?? undefined);
  if (!mcnemar || cluster !== null || !allBinary(xa) || !allBinary(xb)) {
    const ci95: [number, number] | null = t.ci95 === null ? null : [Math.max(-1, t.ci95[0]), Math.min(1, t.ci95[1])];
    return { ...t, ci95, test: 'paired_t', method: cluster !== null ? 'cr2' : 't' };
  }
  let onlyA = 0;
  let onlyB = 0;
  for (let i = 0; i < n; i++) {
    if (xa[i] === 1 && xb[i] === 0) onlyA++;
    else if (xa[i] === 0 && xb[i] === 1) onlyB++;
  }
  return { ...t, ci95: tangoPairedInterval(onlyA, onlyB, n), p_value: n >= 1 ? mcnemarExact(onlyA, onlyB) : null, test: 'mcnemar_exact', method: 'tango' };
}
