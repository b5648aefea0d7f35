/**
 * What a scored run says about its models: the leaderboard with 95 % intervals, consistency across
 * epochs, and every pair of models compared on the vignettes both answered. This one shape is
 * printed by `panoptes report --json`, served at `GET /runs/:id/report` and shown by the app's
 * Results view. Like `/stats`, it keeps snake_case everywhere so that a saved report, a curl and
 * the app read the same fields.
 * Runs on: Node (core); types shared with the renderer.
 */

/** How a vignette's K epoch scores become the one value x_i the statistics are taken over. */
export type EpochReducer = 'mean' | 'majority' | 'max';

export interface ModelScore {
  model: string;
  /** Vignettes with at least one score from this model. */
  n: number;
  /** Mean of the epoch-reduced scores x_i. */
  mean: number;
  /** Sample sd of x_i / sqrt(n); clustered by `by` when a key was named. Null when n < 2. */
  stderr: number | null;
  /** mean ± t(0.975, df) · stderr. Null when n < 2. */
  ci95: [number, number] | null;
  /** Mean over vignettes of 2c(K−c)/(K(K−1)); null unless the scorer is pass/fail and K ≥ 2. */
  flip_rate: number | null;
  /** Vignette ids with 0 < c < K (pass/fail scorers only), the first 100. */
  unstable: string[];
  /** pass@k for k = 1..K, keyed by k as a string; empty unless pass/fail. */
  pass_at_k: Record<string, number>;
  /** pass^k for k = 1..K; empty unless pass/fail. */
  pass_hat_k: Record<string, number>;
  /**
   * Share of Var(x) due to epoch noise: (mean within-vignette variance / K) / Var(x). Near 1: more
   * epochs would tighten the interval; near 0: more vignettes would. Null when K < 2 or Var(x) = 0.
   */
  epoch_noise_share: number | null;
}

export interface PairComparison {
  a: string;
  b: string;
  /** Vignettes both models answered. */
  n: number;
  /** Mean of d_i = x_(a,i) − x_(b,i). */
  diff: number;
  stderr: number | null;
  ci95: [number, number] | null;
  /** Two-sided paired t test; exact McNemar when K = 1 and the scorer is pass/fail. */
  p_value: number | null;
  test: 'paired_t' | 'mcnemar_exact';
  /** Holm-adjusted across every pair of this report. */
  p_holm: number | null;
  /** About 2.8 · sd(d) / sqrt(n): the smallest difference this n would detect (80 % power, α = 0.05). */
  min_detectable_diff: number | null;
  /** The interval spans zero (or cannot be computed): the data do not tell a and b apart. */
  distinguishable: boolean;
}

export interface ScoreReport {
  run_id: string;
  scorer: string;
  /** The scorer version (a hash of its whole definition) whose scores this report shows. */
  scorer_version: string;
  /** Whether values are pass/fail (0 or 1) or graded in [0, 1]. */
  kind: 'pass_fail' | 'graded';
  epochs: number;
  reducer: EpochReducer;
  /** The metadata key the standard errors are clustered by, if any. */
  by: string | null;
  models: ModelScore[];
  pairs: PairComparison[];
  /** With `by`: the same leaderboard per value of the key (pairs omitted). */
  slices?: { value: string; models: ModelScore[] }[];
  /** Scores still to be computed for this scorer version when the report was made. */
  pending: number;
  /** Records this scorer version could not score (a judge call kept failing); they are left out of every figure. */
  failed: number;
  /** Why the last of them could not be scored (e.g. a judge's missing API key); null when none failed. */
  failure: string | null;
  /**
   * Which attempt of each record the statistics use, when the scorer retried hard fails
   * (retryOnHardFail): `first`, the sweep's own record (the default: a model retried until it
   * passes looks better than it is), or `final`, each record's last attempt.
   */
  attempt: 'first' | 'final';
  /**
   * For an LLM-judge scorer: Krippendorff's alpha across its judges over the scored responses
   * (nominal for pass/fail, interval for graded; null with fewer than two judges or nothing to
   * compare) and the judges, in the order their verdicts came.
   */
  judges?: { alpha: number | null; judges: string[] };
  /**
   * For a pairwise judge: what each answer was compared with (a model of the run, or a baseline
   * file). Its values are 1 win, 0.5 tie, 0 loss, so a model's mean is its win rate against it.
   */
  pairwise?: { baseline: string };
}

/**
 * Two runs over the same manifest, paired by vignette id: for each model both ran, run B's
 * epoch-reduced scores against run A's (`diff` = B − A). `a` and `b` of each pair name the model
 * as `runId:model`.
 */
export interface RunComparison {
  run_a: string;
  run_b: string;
  scorer: string;
  /** The scorer version each side shows; the same definition gives the same version. */
  scorer_version_a: string;
  scorer_version_b: string;
  reducer: EpochReducer;
  models_a: ModelScore[];
  models_b: ModelScore[];
  pairs: PairComparison[];
}
