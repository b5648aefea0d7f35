/**
 * What a scored run says about its models: the leaderboard with 95 % intervals, consistency across
 * epochs, and every pair of models compared on the vignettes both answered. This one shape is
 * printed by `panoptes report --json`, served at `GET /runs/:id/report` and shown by the app's
 * Results view. Like `/stats`, it keeps snake_case everywhere so that a saved report, a curl and
 * the app read the same fields.
 * Runs on: Node (core); types shared with the renderer.
 */
import type { PairVerdict } from '../common/pair-verdict.js';
import type { ScorerKind, ReportAttempt } from '../domain.js';
import type { DecisionReport } from './adaptive-decision.js';

/** How a vignette's K epoch scores become the one value x_i the statistics are taken over. */
export type EpochReducer = 'mean' | 'majority' | 'max';

/**
 * How an interval was made: `wilson` (Wilson's score interval, for 0/1 values or a mean whose t
 * interval has no width), `t` (Student's t), `cr2` (t with the clustered CR2 standard error and
 * Bell-McCaffrey degrees of freedom), `tango` (Tango's paired score interval, beside the exact
 * McNemar test). docs/reference/statistics.md says when each is used.
 */
export type IntervalMethod = 'wilson' | 't' | 'cr2' | 'tango';

/**
 * A pair's verdict: `a_better` / `b_better` only when the Holm-adjusted p of the test shown is
 * below 0.05; `too_few` when the pair shares fewer than MIN_VIGNETTES_TO_COMPARE vignettes;
 * `too_few_clusters` when the report clusters and its vignettes fall in too few clusters for an
 * interval (MIN_CLUSTER_DF in cluster-robust.ts). The words each reads as are core/common/pair-verdict.ts's.
 */
export type { PairVerdict };

/** Below this many shared vignettes a pair gets no verdict: "too few vignettes to compare". */
export const MIN_VIGNETTES_TO_COMPARE = 10;

export interface ModelScore {
  model: string;
  /** Vignettes with at least one score from this model. */
  n: number;
  /** Mean of the epoch-reduced scores x_i. */
  mean: number;
  /** Sample sd of x_i / sqrt(n); clustered by `by` when a key was named (CR2). Null when n < 2. */
  stderr: number | null;
  /**
   * The 95 % interval of the mean, always inside [0, 1] and never a point: Wilson's for 0/1 values,
   * else mean ± t(0.975, df) · stderr cut to [0, 1] (`ci_method`). Null without an interval (n < 2
   * for t, n = 0, clustered over too few clusters, or the pairwise baseline's own row).
   */
  ci95: [number, number] | null;
  ci_method: IntervalMethod;
  /**
   * Responses of this model that reached the report with no verdict: every judge failed or gave
   * none, or the scorer could not score the record. Missing data, not in `n` or `mean`.
   */
  not_scored: number;
  /** not_scored over every response of the model the report saw (scored or not); 0 when all were scored. */
  not_scored_share: number;
  /** Single judge verdicts missing (one of several judges gave none), including those of not_scored responses. */
  verdicts_missing: number;
  /** `baseline`: the pairwise scorer's baseline itself, whose 0.5 is by definition, not an estimate. */
  role?: 'baseline';
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
  /**
   * In a report of prompt variants (`variants`), the arm this row is: a model under one variant.
   * `model` then names the arm as `<model> · <variant>`, and the pairs' `a` and `b` name arms so.
   */
  arm?: { model: string; variant: string };
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
  /**
   * Two-sided paired t test (clustered by `by` when the report clusters); exact McNemar when K = 1,
   * the scorer is pass/fail and nothing is clustered. The interval comes from the same method.
   */
  p_value: number | null;
  test: 'paired_t' | 'mcnemar_exact';
  /** How ci95 was made: `tango` beside McNemar, `t` or `cr2` beside the paired t. */
  ci_method: IntervalMethod;
  /** Holm-adjusted across every pair of this report. */
  p_holm: number | null;
  /**
   * The smallest true difference the paired t test at this n finds with 80 % power at α = 0.05
   * (noncentral t): about 2.8 · sd(d) / sqrt(n) for large n, more for small n.
   */
  min_detectable_diff: number | null;
  /** The verdict: better only when p_holm < 0.05 (see PairVerdict). */
  verdict: PairVerdict;
  /**
   * verdict is a_better or b_better: the Holm-adjusted p of the test shown is below 0.05. (Before
   * this field meant "the unadjusted interval excludes 0", which ignored Holm.)
   */
  distinguishable: boolean;
}

export interface ScoreReport {
  run_id: string;
  scorer: string;
  /** The scorer version (a hash of its whole definition) whose scores this report shows. */
  scorer_version: string;
  /** Whether values are pass/fail (0 or 1) or graded in [0, 1]. */
  kind: ScorerKind;
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
  /**
   * Responses with no verdict, over every model (those left off the leaderboard too): the scorer
   * could not score the record (a judge call kept failing, a plugin threw) or every judge answered
   * without a verdict. Missing data, left out of every figure and never counted as fails; per model
   * in `models[].not_scored`. The one count of what was not scored.
   */
  not_scored: number;
  /** Why the last record the scorer could not score was not (e.g. a judge's missing API key); null when none failed. */
  not_scored_reason: string | null;
  /**
   * Deprecated (read `not_scored`): the records this scorer version could not score, the part of
   * `not_scored` that is not a judge's non-verdict, kept for readers of older reports.
   */
  failed: number;
  /** Deprecated: the same as `not_scored_reason`. */
  failure: string | null;
  /**
   * Which attempt of each record the statistics use, when the scorer retried hard fails
   * (retryOnHardFail): `first`, the sweep's own record (the default: a model retried until it
   * passes looks better than it is), or `final`, each record's last attempt.
   */
  attempt: ReportAttempt;
  /**
   * For an LLM-judge scorer: Krippendorff's alpha across its judges over the scored responses
   * (nominal for pass/fail, interval for graded; null with fewer than two judges or nothing to
   * compare; a pairwise scorer's baseline's own answers are left out) and the judges, in the order
   * their verdicts came.
   */
  judges?: { alpha: number | null; judges: string[] };
  /** What the reader must weigh before the figures: responses not scored, too few clusters or vignettes. */
  warnings: string[];
  /**
   * The kind the scorer declared, when the report reads it otherwise: a code plugin declared graded
   * whose every verdict is a boolean pass (value 1) or fail (value 0) is reported as pass/fail.
   */
  declared_kind?: ScorerKind;
  /**
   * A run posed until decided: its pairs as its anytime-valid confidence sequences decided them
   * (where, at which n, the calls used and saved). `pairs` is then empty: a fixed-n interval is not
   * valid after a stop chosen by the data.
   */
  anytime?: DecisionReport;
  /**
   * For a pairwise judge: what each answer was compared with (a model of the run, or a baseline
   * file). Its values are 1 win, 0.5 tie, 0 loss, so a model's mean is its win rate against it.
   */
  pairwise?: { baseline: string };
  /**
   * The run's prompt variants (metadata `variant`, two or more): each leaderboard row is then an
   * arm (model, variant), and arms are paired by the underlying item (metadata `item`), so prompt A
   * against prompt B gets the same paired test, Holm and verdict as model A against model B.
   */
  variants?: string[];
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
  /** Prompt variants of either run: rows and pairs are arms (model, variant), as in ScoreReport. */
  variants?: string[];
}
