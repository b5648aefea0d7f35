/**
 * Power and sample size of a paired comparison of two models, before the sweep is run, after
 * Miller, "Adding Error Bars to Evals" (2024, arXiv:2411.00640): vignettes are draws from a
 * super-population, each pair of models is compared on per-vignette differences, and K epochs only
 * shrink the within-vignette part of their variance:
 *   n = (z_{1−α/2m} + z_{1−β})² · [ω² + (σ_A² + σ_B²)/K] / Δ²,
 * ω² the variance across vignettes of the true per-vignette difference, σ² a model's variance
 * between epochs of one vignette (for pass/fail: half its flip rate), m the pairs planned
 * (Bonferroni's α/m, the first and strictest step of Holm, so the plan holds for every pair).
 * With one epoch of a pass/fail scorer the design is McNemar's (Connor 1987):
 *   n = [z_{1−α/2m} √ψ + z_{1−β} √(ψ − Δ²)]² / Δ², ψ the chance the two disagree on a vignette.
 * The variance components come from guesses (accuracies, a flip rate, a correlation) or from a
 * pilot run's per-vignette epoch scores. docs/guide/planning.md says what each means;
 * scripts/decision-reference.py checks these against scipy and by simulation.
 * Runs on: Node (core); pure, no I/O.
 */
import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import { mean, sampleVariance } from './statistics.js';

/** What the variance of one pair's per-vignette differences is made of. */
export interface VarianceComponents {
  /** ω²: variance across vignettes of the true (infinitely many epochs) difference. */
  between: number;
  /** σ_A² + σ_B²: the two models' variance between epochs of one vignette, summed. */
  within: number;
  /** Pass/fail only: ψ, the chance the two models disagree on one epoch of a vignette (McNemar's design); null for graded scores. */
  discordance: number | null;
}

/** The planning quantiles: z_{1−α/2m} and z_{1−β}. */
export function planningQuantiles(alpha: number, power: number, pairs: number): { zAlpha: number; zBeta: number } {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
  if (!(power > 0 && power < 1)) throw new RangeError(`power must be in (0, 1), got ${power}`);
  if (!(Number.isInteger(pairs) && pairs >= 1)) throw new RangeError(`pairs must be a whole number ≥ 1, got ${pairs}`);
  return { zAlpha: normalQuantile(1 - alpha / (2 * pairs), 0, 1), zBeta: normalQuantile(power, 0, 1) };
}

export interface Design {
  delta: number;
  alpha: number;
  power: number;
  pairs: number;
}

/** Miller's n (not rounded) for K epochs. */
export function millerVignettes(v: VarianceComponents, epochs: number, d: Design): number {
  const { zAlpha, zBeta } = planningQuantiles(d.alpha, d.power, d.pairs);
  return ((zAlpha + zBeta) ** 2 * (v.between + v.within / epochs)) / (d.delta * d.delta);
}

/** McNemar's n (not rounded) for one epoch of a pass/fail scorer; needs ψ ≥ Δ (a difference is made of disagreements). */
export function mcnemarVignettes(psi: number, d: Design): number {
  if (!(psi >= Math.abs(d.delta))) throw new RangeError(`a difference of ${d.delta} needs the models to disagree at least that often, but the discordance is ${psi}`);
  const { zAlpha, zBeta } = planningQuantiles(d.alpha, d.power, d.pairs);
  return (zAlpha * Math.sqrt(psi) + zBeta * Math.sqrt(psi - d.delta * d.delta)) ** 2 / (d.delta * d.delta);
}

/** The vignettes a design needs (rounded up): McNemar's for K = 1 of a pass/fail scorer, Miller's otherwise. */
export function vignettesNeeded(v: VarianceComponents, epochs: number, d: Design): number {
  const n = epochs === 1 && v.discordance !== null ? mcnemarVignettes(v.discordance, d) : millerVignettes(v, epochs, d);
  return Math.max(2, Math.ceil(n - 1e-9));
}

/**
 * The smallest difference n vignettes at K epochs detect with the design's power: Miller's formula
 * solved for Δ, or McNemar's by bisection (n falls as Δ grows). Null when no difference the
 * models' disagreement allows is detectable at this n.
 */
export function minimumDetectable(v: VarianceComponents, epochs: number, n: number, d: Omit<Design, 'delta'>): number | null {
  if (epochs === 1 && v.discordance !== null) {
    const psi = v.discordance;
    const at = (delta: number) => mcnemarVignettes(psi, { ...d, delta });
    if (!(psi > 0) || at(psi) > n) return null;
    let lo = 1e-9;
    let hi = psi;
    for (let i = 0; i < 200 && hi - lo > 1e-12; i++) {
      const mid = (lo + hi) / 2;
      if (at(mid) > n) lo = mid;
      else hi = mid;
    }
    return hi;
  }
  const { zAlpha, zBeta } = planningQuantiles(d.alpha, d.power, d.pairs);
  return (zAlpha + zBeta) * Math.sqrt((v.between + v.within / epochs) / n);
}

/** Guesses for one pair of pass/fail models: their accuracies, flip rates and the correlation of their per-vignette success chances. */
export interface PairGuess {
  accuracyA: number;
  accuracyB: number;
  /** The chance two epochs of one vignette disagree (0: each vignette always gets the same verdict). */
  flipRateA: number;
  flipRateB: number;
  /** Correlation across vignettes of the two models' chances of passing (0: unrelated; > 0: they find the same vignettes hard). */
  correlation: number;
}

/**
 * Components from guesses. A model of accuracy p and flip rate f has per-vignette chances p_i with
 * E[p_i] = p and E[p_i(1 − p_i)] = f/2 (its within-vignette variance), so Var(p_i) = p(1 − p) − f/2.
 * ω² = Var(p_A,i) + Var(p_B,i) − 2ρ·sd·sd; ψ = p_A + p_B − 2(p_A p_B + ρ·sd·sd).
 */
export function componentsFromGuess(g: PairGuess): VarianceComponents {
  const varOf = (p: number, f: number, which: string) => {
    if (!(p >= 0 && p <= 1)) throw new RangeError(`accuracy of ${which} must be in [0, 1], got ${p}`);
    const v = p * (1 - p) - f / 2;
    if (!(f >= 0) || v < -1e-12) throw new RangeError(`a flip rate of ${f} is impossible at accuracy ${p} (at most 2p(1 − p) = ${(2 * p * (1 - p)).toFixed(3)})`);
    return Math.max(0, v);
  };
  if (!(g.correlation >= -1 && g.correlation <= 1)) throw new RangeError(`correlation must be in [−1, 1], got ${g.correlation}`);
  const va = varOf(g.accuracyA, g.flipRateA, 'A');
  const vb = varOf(g.accuracyB, g.flipRateB, 'B');
  const cov = g.correlation * Math.sqrt(va * vb);
  return {
    between: Math.max(0, va + vb - 2 * cov),
    within: g.flipRateA / 2 + g.flipRateB / 2,
    discordance: g.accuracyA + g.accuracyB - 2 * (g.accuracyA * g.accuracyB + cov),
  };
}

/** One vignette of a pilot: each model's epoch scores (in [0, 1]; at least one each). */
export interface PilotVignette {
  a: readonly number[];
  b: readonly number[];
}

/**
 * Components from a pilot's per-vignette epoch scores. σ² is the mean within-vignette sample
 * variance (vignettes with two or more epochs); ω² = Var(d̄_i) − (σ_A²/K_A + σ_B²/K_B) averaged
 * over vignettes, floored at 0. With one epoch the within part cannot be seen: `flipRate` (pass/fail)
 * supplies it, else it is taken as 0 — all the variance counted between vignettes, so more epochs
 * are planned as no help (the conservative reading). ψ for pass/fail: the mean over vignettes of
 * p̂_A + p̂_B − 2 p̂_A p̂_B with p̂ the epoch pass shares (unbiased, the two models' epochs being
 * independent).
 */
export function componentsFromPilot(vignettes: readonly PilotVignette[], passFail: boolean, flipRate?: number): VarianceComponents {
  if (vignettes.length < 2) throw new RangeError(`a pilot needs at least two vignettes both models answered, got ${vignettes.length}`);
  const d: number[] = [];
  let withinA = 0;
  let withinB = 0;
  let multi = 0;
  let leak = 0;
  let psi = 0;
  for (const v of vignettes) {
    const ma = mean(v.a);
    const mb = mean(v.b);
    d.push(ma - mb);
    psi += ma + mb - 2 * ma * mb;
    if (v.a.length >= 2 && v.b.length >= 2) {
      const sa = sampleVariance(v.a);
      const sb = sampleVariance(v.b);
      withinA += sa;
      withinB += sb;
      leak += sa / v.a.length + sb / v.b.length;
      multi++;
    }
  }
  let within: number;
  let leaked: number;
  if (multi > 0) {
    within = (withinA + withinB) / multi;
    leaked = leak / multi;
  } else {
    within = passFail && flipRate !== undefined ? flipRate : 0;
    leaked = within;
  }
  return { between: Math.max(0, sampleVariance(d) - leaked), within, discordance: passFail ? psi / vignettes.length : null };
}
