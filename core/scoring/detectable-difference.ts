/**
 * The minimum detectable difference of a two-sided t test: the smallest true difference the test
 * at α = 0.05 finds with 80 % power. Power is read from the noncentral t distribution, so it is
 * right at n = 2..10 where the central shortcut (t(0.975) + t(0.80)) · SE understates it (14.08
 * against 16.33 standard errors at n = 2). The noncentral t is T' = (Z + λ)/S with S² = χ²_df/df;
 * P(T' > t) = E[Φ(λ − tS)], integrated over S's density by a composite Gauss-Legendre rule (in
 * √S, smooth at 0) over the range that holds S's mass. The noncentrality λ depends on df alone, so it is solved once per df and kept.
 * Checked against statsmodels' TTestPower.solve_power (scripts/stats-reference.py).
 * Runs on: Node (core); pure, no I/O.
 */
import erfc from '@stdlib/math-base-special-erfc';
import gammaln from '@stdlib/math-base-special-gammaln';
import tQuantile from '@stdlib/stats-base-dists-t-quantile';

const POWER = 0.8;
/** Panels of the composite Gauss-Legendre rule over S's range, and nodes per panel. */
const PANELS = 24;
const NODES = 16;
/** Past this df the noncentral t is normal to better than 1e-9 on λ. */
const NORMAL_DF = 1e7;

const normalCdf = (x: number) => 0.5 * erfc(-x / Math.SQRT2);

/** Gauss-Legendre nodes and weights on [−1, 1], by Newton's method on the Legendre polynomial. */
function gaussLegendre(m: number): { x: Float64Array; w: Float64Array } {
  const x = new Float64Array(m);
  const w = new Float64Array(m);
  for (let i = 0; i < m; i++) {
    let z = Math.cos((Math.PI * (i + 0.75)) / (m + 0.5));
    let dp = 1;
    for (let it = 0; it < 100; it++) {
      let p0 = 1;
      let p1 = z;
      for (let k = 2; k <= m; k++) {
        const p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = (m * (z * p1 - p0)) / (z * z - 1);
      const step = p1 / dp;
      z -= step;
      if (Math.abs(step) < 1e-16) break;
    }
    x[i] = z;
    w[i] = 2 / ((1 - z * z) * dp * dp);
  }
  return { x, w };
}

const RULE = gaussLegendre(NODES);

/** Two-sided power of the t test at critical value `crit` with noncentrality λ and df degrees of freedom. */
export function tTestPower(lambda: number, df: number, crit: number): number {
  const half = df / 2;
  const logNorm = Math.log(2) + half * Math.log(half) - gammaln(half);
  // S is concentrated around 1 with sd about 1/√(2df); its far tail beyond this carries < 1e-15.
  const spread = 8.5 / Math.sqrt(df);
  // Integrated over u = √s (s = u², ds = 2u du), which makes s^(df − 1) smooth at 0 for small df.
  const lo = Math.sqrt(Math.max(0, 1 - spread));
  const hi = Math.sqrt(1 + spread);
  const width = (hi - lo) / PANELS;
  let sum = 0;
  for (let p = 0; p < PANELS; p++) {
    const mid = lo + (p + 0.5) * width;
    for (let i = 0; i < NODES; i++) {
      const u = mid + (RULE.x[i]! * width) / 2;
      const s = u * u;
      // S's density: 2 (df/2)^(df/2) / Γ(df/2) · s^(df − 1) · e^(−df s²/2), times ds/du = 2u.
      const density = 2 * u * Math.exp(logNorm + (df - 1) * Math.log(s) - (df * s * s) / 2);
      sum += RULE.w[i]! * density * (normalCdf(lambda - crit * s) + normalCdf(-lambda - crit * s));
    }
  }
  return (sum * width) / 2;
}

const lambdas = new Map<number, number>();

/** The noncentrality at which the two-sided 5 % t test on df degrees of freedom has 80 % power. */
export function detectableNoncentrality(df: number): number {
  if (!(df >= 1)) throw new RangeError(`detectableNoncentrality needs df ≥ 1, got ${df}`);
  const known = lambdas.get(df);
  if (known !== undefined) return known;
  const crit = tQuantile(0.975, df);
  let lambda: number;
  if (df >= NORMAL_DF) lambda = crit + tQuantile(POWER, df);
  else {
    // Power rises smoothly with λ: secant steps from the central shortcut converge in a few.
    let x0 = crit + tQuantile(POWER, df);
    let x1 = x0 * 1.1;
    let f0 = tTestPower(x0, df, crit) - POWER;
    let f1 = tTestPower(x1, df, crit) - POWER;
    for (let i = 0; i < 50 && f1 !== f0 && Math.abs(x1 - x0) > 1e-14 * x1; i++) {
      const x2 = x1 - (f1 * (x1 - x0)) / (f1 - f0);
      x0 = x1;
      f0 = f1;
      x1 = x2;
      f1 = tTestPower(x1, df, crit) - POWER;
    }
    lambda = x1;
  }
  lambdas.set(df, lambda);
  return lambda;
}

/** λ(df) · SE: the minimum detectable difference for a standard error on df degrees of freedom. */
export function minimumDetectableDiff(stderr: number, df: number): number {
  return detectableNoncentrality(df) * stderr;
}
