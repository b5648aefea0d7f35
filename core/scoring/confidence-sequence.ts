/**
 * An anytime-valid confidence sequence for the mean of bounded values: the betting confidence
 * sequence of Waudby-Smith & Ramdas ("Estimating means of bounded random variables by betting",
 * JRSS-B 2024), hedged, with the predictable plug-in bet, for paired differences d in [−1, 1]
 * (mapped to x = (d + 1)/2 in [0, 1]).
 *
 * For a candidate mean m two gamblers bet on each x_t against m: K⁺_t(m) = Π (1 + λ⁺_i (x_i − m))
 * and K⁻_t(m) = Π (1 − λ⁻_i (x_i − m)), with λ_t = min(√(2 log(2/α) / (σ̂²_{t−1} t log(1 + t))), c)
 * capped at c/m (K⁺) and c/(1 − m) (K⁻), c = 1/2, σ̂² the regularised running variance
 * (1/4 + Σ (x_i − μ̂_i)²)/(t + 1) and μ̂ the running mean (1/2 + Σ x_i)/(t + 1). Under the truth
 * the hedged capital max(K⁺, K⁻)/2 is at most a non-negative martingale starting at 1, so by
 * Ville's inequality it ever reaches 1/α with chance at most α: the set of m it never reached 1/α
 * at covers the truth at every t at once, however the stopping time was chosen.
 *
 * This is the with-replacement sequence. The vignettes come in a seeded random order of the
 * manifest; taking the manifest as a sample of vignettes like it (as the report's intervals do), the
 * ordered differences are independent draws, and the sequence covers their mean. The
 * finite-population (without-replacement) sequence of Waudby-Smith & Ramdas (NeurIPS 2020) is
 * tighter near the end of the manifest, but it needs each vignette's value fixed: a model's answers
 * are sampled, so the value seen is a noisy draw of the vignette's own, and that sequence then
 * excludes the truth far more often than α (scripts/decision-reference.py showed it: 90 % of null
 * runs) — so it is not used.
 *
 * The set is kept on a grid of m (2,001 points by default: a step of 0.001 in d) as "rejected so
 * far" flags — the running intersection, itself valid. K⁺ falls and K⁻ rises with m, so each
 * time's set is an interval; `interval()` reports its outer bound (each end moved out to the last
 * rejected grid point), which only widens it, and every decision reads that interval (at most one
 * grid step, 0.001 in d, more cautious than the exact set). Each push is O(grid) and allocates
 * nothing.
 * Runs on: Node (core); pure, no I/O.
 */

/** The bet's cap: c of λ ≤ c/μ. */
const CAP = 0.5;

export interface ConfidenceSequenceOptions {
  /** The most draws there can be (the manifest's vignettes). */
  population: number;
  alpha: number;
  /** Grid points over m in [0, 1] (odd, so m = 1/2 is one); default 2001. */
  grid?: number;
}

export class BettingConfidenceSequence {
  readonly population: number;
  readonly alpha: number;
  private readonly g: number;
  private readonly logKPlus: Float64Array;
  private readonly logKMinus: Float64Array;
  private readonly rejected: Uint8Array;
  private readonly logThreshold: number;
  private readonly logTwoOverAlpha: number;
  private t = 0;
  private sum = 0;
  private squares = 0.25;
  private lo = 0;
  private hi: number;

  constructor(opts: ConfidenceSequenceOptions) {
    const g = opts.grid ?? 2001;
    if (!(Number.isInteger(opts.population) && opts.population >= 1)) throw new RangeError(`population must be a whole number ≥ 1, got ${opts.population}`);
    if (!(opts.alpha > 0 && opts.alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${opts.alpha}`);
    if (!(Number.isInteger(g) && g >= 3 && g % 2 === 1)) throw new RangeError(`grid must be an odd whole number ≥ 3, got ${g}`);
    this.population = opts.population;
    this.alpha = opts.alpha;
    this.g = g;
    this.logKPlus = new Float64Array(g);
    this.logKMinus = new Float64Array(g);
    this.rejected = new Uint8Array(g);
    this.logThreshold = Math.log(1 / opts.alpha);
    this.logTwoOverAlpha = Math.log(2 / opts.alpha);
    this.hi = g - 1;
  }

  /** Draws so far. */
  get n(): number {
    return this.t;
  }

  /** Adds the next draw, a paired difference in [−1, 1]. */
  push(d: number): void {
    if (!(d >= -1 && d <= 1)) throw new RangeError(`a paired difference must be in [−1, 1], got ${d}`);
    if (this.t >= this.population) throw new RangeError(`all ${this.population} of the population were drawn already`);
    const x = (d + 1) / 2;
    const t = this.t + 1;
    const variance = this.squares / t; // σ̂²_{t−1} = (1/4 + Σ_{i<t} (x_i − μ̂_i)²) / t
    const bet = Math.min(Math.sqrt((2 * this.logTwoOverAlpha) / (variance * t * Math.log(1 + t))), CAP);
    const logHalf = Math.log(0.5);
    const last = this.g - 1;
    for (let j = this.lo; j <= this.hi; j++) {
      if (this.rejected[j] === 1) continue;
      const mu = j / last;
      const lPlus = mu > 0 ? Math.min(bet, CAP / mu) : bet;
      const lMinus = mu < 1 ? Math.min(bet, CAP / (1 - mu)) : bet;
      const kp = (this.logKPlus[j]! += Math.log1p(lPlus * (x - mu)));
      const km = (this.logKMinus[j]! += Math.log1p(-lMinus * (x - mu)));
      if (Math.max(logHalf + kp, logHalf + km) >= this.logThreshold) this.rejected[j] = 1;
    }
    this.t = t;
    this.sum += x;
    const muHat = (0.5 + this.sum) / (t + 1);
    this.squares += (x - muHat) ** 2;
    this.narrow();
  }

  private narrow(): void {
    let lo = this.lo;
    let hi = this.hi;
    while (lo <= hi && this.rejected[lo] === 1) lo++;
    while (hi >= lo && this.rejected[hi] === 1) hi--;
    // Every grid point rejected (the truth lies between two of them): keep the last interval, which holds it.
    if (lo > hi) return;
    this.lo = lo;
    this.hi = hi;
  }

  /** The sequence's interval for the mean difference, in [−1, 1] (outer bound on the grid). */
  interval(): [number, number] {
    const last = this.g - 1;
    const lo = this.lo > 0 ? (this.lo - 1) / last : 0;
    const hi = this.hi < last ? (this.hi + 1) / last : 1;
    return [2 * lo - 1, 2 * hi - 1];
  }

  /** Whether the interval excludes d = 0. */
  excludesZero(): boolean {
    const [lo, hi] = this.interval();
    return lo > 0 || hi < 0;
  }
}
