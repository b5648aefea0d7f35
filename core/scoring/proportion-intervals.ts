/**
 * Score intervals for pass rates, which stay inside [0, 1] and never shrink to a point: Wilson's
 * interval for one proportion, and Tango's score interval (1998) for the difference of two paired
 * proportions, the interval that goes with the exact McNemar test when two pass/fail models
 * answered the same vignettes once. A t interval on 0/1 values is [1, 1] for a perfect model and
 * can reach past 1 near the boundary; these cannot. Checked against statsmodels' Wilson interval
 * and a numerical maximum-likelihood solution of Tango's (scripts/stats-reference.py).
 * Runs on: Node (core); pure, no I/O.
 */

/** z(0.975): the two-sided 95 % normal quantile. */
export const Z975 = 1.959963984540054;

/**
 * Wilson's score interval for `passes` out of `n` at 95 %: the p whose score test does not reject,
 * (p̂ + z²/2n ± z √(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n). Null when n = 0.
 */
export function wilsonInterval(passes: number, n: number): [number, number] | null {
  if (!(n > 0 && passes >= 0 && passes <= n)) return null;
  const z2 = Z975 * Z975;
  const p = passes / n;
  const centre = p + z2 / (2 * n);
  const half = Z975 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  const denom = 1 + z2 / n;
  // The closed form is exact at the ends: 0 passes gives a lower bound of 0, n passes an upper of 1.
  return [passes === 0 ? 0 : Math.max(0, (centre - half) / denom), passes === n ? 1 : Math.min(1, (centre + half) / denom)];
}

/**
 * Tango's score statistic for Δ = p_a − p_b on paired pass/fail answers (onlyA vignettes only a
 * passed, onlyB only b, of n): Z(Δ) = (onlyA − onlyB − nΔ) / √(n(2q + Δ(1 − Δ))), with q the
 * maximum-likelihood P(only b passes) under Δ, the positive root of
 * 2n q² + ((2n − onlyA + onlyB)Δ − onlyA − onlyB) q − onlyB · Δ(1 − Δ) = 0.
 */
function tangoScore(onlyA: number, onlyB: number, n: number, delta: number): number {
  const b = (2 * n - onlyA + onlyB) * delta - onlyA - onlyB;
  const q = (-b + Math.sqrt(Math.max(0, b * b + 8 * n * onlyB * delta * (1 - delta)))) / (4 * n);
  const num = onlyA - onlyB - n * delta;
  const variance = n * (2 * q + delta * (1 - delta));
  if (!(variance > 0)) return num === 0 ? 0 : num > 0 ? Infinity : -Infinity;
  return num / Math.sqrt(variance);
}

/** The Δ in [lo, hi] where the decreasing `f` crosses `target`, by bisection to double precision. */
function crossing(f: (d: number) => number, target: number, lo: number, hi: number): number {
  for (let i = 0; i < 200 && hi - lo > 1e-15; i++) {
    const mid = (lo + hi) / 2;
    if (f(mid) > target) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * Tango's score interval (1998) for p_a − p_b on paired pass/fail answers: the Δ whose score test
 * does not reject, |Z(Δ)| ≤ z. It goes with the exact McNemar test (both read only the discordant
 * vignettes against n), stays inside [−1, 1], has width even when the models agree on every
 * vignette, and covered 94-97 % in simulation at n = 10..60 where Newcombe's hybrid interval
 * covered 90 %. `onlyA`/`onlyB`: vignettes only a / only b passed, of `n`. Null when n = 0.
 */
export function tangoPairedInterval(onlyA: number, onlyB: number, n: number): [number, number] | null {
  if (!(n > 0 && onlyA >= 0 && onlyB >= 0 && onlyA + onlyB <= n)) return null;
  const f = (d: number) => tangoScore(onlyA, onlyB, n, d);
  const diff = (onlyA - onlyB) / n;
  const edge = 1 - 1e-12;
  const lo = f(-edge) <= Z975 ? -1 : crossing(f, Z975, -edge, diff);
  const hi = f(edge) >= -Z975 ? 1 : crossing(f, -Z975, diff, edge);
  return [lo, hi];
}
