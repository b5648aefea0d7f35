/**
 * Score intervals for pass rates, which stay inside [0, 1] and never shrink to a point: Wilson's
 * interval for one proportion, and Newcombe's hybrid score interval (his method 10, 1998) for the
 * difference of two paired proportions, the interval that goes with the exact McNemar test when
 * two pass/fail models answered the same vignettes once. A t interval on 0/1 values is [1, 1] for
 * a perfect model and can reach past 1 near the boundary; these cannot. Checked against
 * statsmodels' Wilson interval (scripts/stats-reference.py builds Newcombe's from it).
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
 * Newcombe's hybrid score interval for p_a − p_b on paired pass/fail answers: `both` vignettes
 * both passed, `onlyA` only a passed, `onlyB` only b, `neither` neither. Each model's Wilson
 * interval (l, u) is combined through the correlation φ of the 2×2 table:
 * L = Δ − √((p_a − l_a)² − 2φ(p_a − l_a)(u_b − p_b) + (u_b − p_b)²), U likewise with the other
 * ends; φ = 0 when a margin is empty. Null when n = 0.
 */
export function newcombePairedInterval(both: number, onlyA: number, onlyB: number, neither: number): [number, number] | null {
  const n = both + onlyA + onlyB + neither;
  if (!(n > 0)) return null;
  const pa = (both + onlyA) / n;
  const pb = (both + onlyB) / n;
  const [la, ua] = wilsonInterval(both + onlyA, n)!;
  const [lb, ub] = wilsonInterval(both + onlyB, n)!;
  const margins = (both + onlyA) * (onlyB + neither) * (both + onlyB) * (onlyA + neither);
  const phi = margins === 0 ? 0 : (both * neither - onlyA * onlyB) / Math.sqrt(margins);
  const diff = pa - pb;
  const down = Math.sqrt(Math.max(0, (pa - la) ** 2 - 2 * phi * (pa - la) * (ub - pb) + (ub - pb) ** 2));
  const up = Math.sqrt(Math.max(0, (ua - pa) ** 2 - 2 * phi * (ua - pa) * (pb - lb) + (pb - lb) ** 2));
  return [Math.max(-1, diff - down), Math.min(1, diff + up)];
}
