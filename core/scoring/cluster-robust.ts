/**
 * The mean's standard error when vignettes come in clusters (a metadata key): CR2, the
 * bias-reduced cluster-robust variance of Bell and McCaffrey (2002), with their small-sample
 * degrees of freedom. The usual CR1 estimator (statsmodels' cov_type='cluster') is too narrow with
 * few or uneven clusters: its interval covered 49 % in simulation with one large cluster. For the
 * mean (a regression on a constant) both have closed forms, derived in docs/reference/statistics.md:
 * with S_g the sum of residuals x_i − μ in cluster g and p_g = n_g / n its share,
 *   Var_CR2 = Σ_g S_g² / (1 − p_g) / n²,
 *   df_BM = 1 / (Σ p_g² + (Σ q_g)² − Σ q_g²),  q_g = p_g² / (1 − p_g),
 * which is C − 1 for C equal clusters. scripts/stats-reference.py checks both against the general
 * matrix definition (the symmetric square root of I − H_gg and the eigenvalues of G'G).
 * Runs on: Node (core); pure, no I/O.
 */

/** One cluster holding more than this share of the values dominates: CR2 is not trusted alone, and the report warns. */
export const DOMINANT_CLUSTER_SHARE = 0.5;

/**
 * A clustered interval needs at least this many Bell-McCaffrey degrees of freedom, about four
 * even clusters. Below it (two or three clusters, or one cluster holding most vignettes, whose df
 * is near 1) the interval rests on the spread of two or three cluster sums, multiplied by
 * t(0.975, 1) = 12.7 or t(0.975, 2) = 4.3: in simulation such intervals covered 97.6-100 % and found
 * nothing. The report then says "too few clusters to compare" instead of an interval, as it says
 * "too few vignettes to compare" under ten vignettes.
 */
export const MIN_CLUSTER_DF = 3;

/** Whether `df` Bell-McCaffrey degrees of freedom allow a clustered interval; four even clusters' 3, computed as 2.9999999999999996, do. */
export function enoughClusters(df: number): boolean {
  return df >= MIN_CLUSTER_DF - 1e-9;
}

export interface ClusterRobust {
  /** The CR2 standard error of the mean; NaN with fewer than two clusters. */
  stderr: number;
  /** Bell-McCaffrey degrees of freedom; NaN with fewer than two clusters. */
  df: number;
  clusters: number;
  /** The largest cluster's share of the values. */
  largestShare: number;
}

/** CR2 and its degrees of freedom for the mean of `xs`, `cluster[i]` being x_i's cluster index. */
export function cr2Mean(xs: ArrayLike<number>, cluster: ArrayLike<number>): ClusterRobust {
  const n = xs.length;
  if (cluster.length !== n) throw new RangeError(`cr2Mean: ${n} values but ${cluster.length} cluster labels`);
  let total = 0;
  for (let i = 0; i < n; i++) total += xs[i]!;
  const m = total / n;
  const sums = new Map<number, { s: number; size: number }>();
  for (let i = 0; i < n; i++) {
    const g = sums.get(cluster[i]!);
    if (g) {
      g.s += xs[i]! - m;
      g.size += 1;
    } else sums.set(cluster[i]!, { s: xs[i]! - m, size: 1 });
  }
  const c = sums.size;
  let largest = 0;
  for (const g of sums.values()) largest = Math.max(largest, g.size);
  if (c < 2) return { stderr: NaN, df: NaN, clusters: c, largestShare: n > 0 ? largest / n : NaN };
  let meat = 0;
  const sizes: number[] = [];
  for (const g of sums.values()) {
    meat += (g.s * g.s) / (1 - g.size / n);
    sizes.push(g.size);
  }
  return { stderr: Math.sqrt(meat) / n, df: bellMcCaffreyDf(sizes), clusters: c, largestShare: largest / n };
}

/**
 * Bell-McCaffrey degrees of freedom of a clustered mean, from the clusters' sizes alone:
 * 1 / (Σ p_g² + (Σ q_g)² − Σ q_g²), p_g = n_g / n, q_g = p_g² / (1 − p_g). NaN under two clusters.
 */
export function bellMcCaffreyDf(sizes: readonly number[]): number {
  if (sizes.length < 2) return NaN;
  let n = 0;
  for (const size of sizes) n += size;
  let sumP2 = 0;
  let sumQ = 0;
  let sumQ2 = 0;
  for (const size of sizes) {
    const p = size / n;
    const q = (p * p) / (1 - p);
    sumP2 += p * p;
    sumQ += q;
    sumQ2 += q * q;
  }
  return 1 / (sumP2 + sumQ * sumQ - sumQ2);
}
