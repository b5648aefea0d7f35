/**
 * Builds a `ScoreReport` (one run) and a `RunComparison` (two runs of one manifest) from streamed
 * score cells, in any order, in bounded memory and without holding the event loop.
 *
 * Input: one `ScoreCell` per verdict on one response, i.e. per (model, vignette, epoch) and judge.
 * The store may hand them over in whatever order its query finds fastest (by record, by model, by
 * vignette): each cell lands in its (model, vignette, epoch) slot. Several cells for one slot (a
 * scorer with several judges) make one epoch: it passes when more than half of its verdicts passed,
 * and for a pass/fail scorer that is its value (1 or 0) everywhere; a graded epoch's value is the
 * mean of its verdicts. A missing verdict (a judge that failed or gave none) is counted apart and
 * never enters a value. The caller picks which attempt feeds the statistics (the first one, unless
 * asked otherwise) before the cells reach here. Which test and interval each figure gets, and the
 * verdict rule, are in reported-interval.ts and docs/reference/statistics.md.
 *
 * Memory: per model four typed arrays of vignettes × epochs slots (value sum, verdict count, pass
 * count, missing count: 14 bytes a slot) and one id per vignette, so 1,000,000 scores of 2 models ×
 * 5 epochs × 100,000 vignettes take about 15 MB whatever the order. Time: the cells are read once and every
 * statistic is an O(n) pass; all loops hand the event loop back every ~10 ms.
 * Runs on: Node (core).
 */
import { MIN_VIGNETTES_TO_COMPARE, type EpochReducer, type ModelScore, type PairComparison, type PairVerdict, type RunComparison, type ScoreReport } from './report-shape.js';
import { epochNoise, epochNoiseShare, flipRate, holm, passCurves, reduceEpochs } from './statistics.js';
import { type ModelSlots, RunCells, type ScoreCells, Turns, VignetteIndex } from './report-cells.js';
import { bellMcCaffreyDf, DOMINANT_CLUSTER_SHARE, enoughClusters, MIN_CLUSTER_DF } from './cluster-robust.js';
import { reportedMean, reportedPair } from './reported-interval.js';
import type { ScorerKind, ReportAttempt } from '../domain.js';

export type { ScoreCell, ScoreCells } from './report-cells.js';

/** What the report needs to know besides the cells: the run, the scorer and how to reduce. */
export interface ReportOptions {
  runId: string;
  scorer: string;
  scorerVersion: string;
  kind: ScorerKind;
  /** The run's epochs K: cells carry epochs 1..K. */
  epochs: number;
  /** Default `mean`. */
  reducer?: EpochReducer;
  /** The metadata key of the cells' `group`: standard errors are clustered by it and slices made. */
  by?: string | null;
  /** The leaderboard's order (the run's models); models not named come after, as first seen. */
  models?: readonly string[];
  /** Scores still to be computed for this scorer version (shown, not used). */
  pending?: number;
  /** Records this scorer version could not score (they come as missing cells), and the last reason why. */
  failed?: number;
  failure?: string | null;
  /** Which attempt of each record the cells are (default `first`): said in the report, not used. */
  attempt?: ReportAttempt;
  /** A pairwise judge's baseline (a model, or a baseline file): means are win rates against it. */
  pairwiseBaseline?: string | undefined;
  /**
   * The kind the scorer declared, when `kind` (the one its figures are read as, reported-kind.ts)
   * differs: a code plugin declared graded whose every verdict is a boolean. Said in the report.
   */
  declaredKind?: ScorerKind;
}

/** How many unstable vignette ids a model lists. */
const UNSTABLE_LISTED = 100;

/** Each vignette's reduced value x_i (NaN where the model has no score) and what it took. */
interface Reduced {
  x: Float64Array;
  /** Vignettes with at least one score, in index order. */
  present: Int32Array;
  /** Vignettes with any cell, a verdict or a missing one, in index order. */
  seen: Int32Array;
  /** Per vignette: epochs with a verdict, epochs with none (only missing cells), single verdicts missing. */
  scored: Uint16Array;
  notScored: Uint16Array;
  missing: Uint16Array;
}

async function reduceModel(slots: ModelSlots, vignettes: number, reducer: EpochReducer, passFail: boolean, turns: Turns): Promise<Reduced> {
  const x = new Float64Array(vignettes).fill(NaN);
  const present: number[] = [];
  const seen: number[] = [];
  const scored = new Uint16Array(vignettes);
  const notScored = new Uint16Array(vignettes);
  const missing = new Uint16Array(vignettes);
  const values = new Float64Array(slots.epochs);
  for (let vi = 0; vi < vignettes; vi++) {
    const k = slots.read(vi, values, passFail);
    if (k > 0) {
      x[vi] = reduceEpochs(values, reducer, k);
      present.push(vi);
    }
    if (k > 0 || slots.lastNotScored > 0) seen.push(vi);
    scored[vi] = k;
    notScored[vi] = slots.lastNotScored;
    missing[vi] = slots.lastMissing;
    if (turns.due(slots.epochs)) await turns.take();
  }
  return { x, present: Int32Array.from(present), seen: Int32Array.from(seen), scored, notScored, missing };
}

/** One model's leaderboard line over the vignettes `which` (indices with a score). */
async function modelScore(
  model: string,
  slots: ModelSlots,
  reduced: Reduced,
  which: Int32Array,
  seen: Int32Array,
  index: VignetteIndex,
  kind: ScorerKind,
  clustered: boolean,
  turns: Turns,
  baseline = false,
): Promise<ModelScore> {
  const n = which.length;
  const K = slots.epochs;
  const xs = new Float64Array(n);
  const clusters = new Int32Array(n);
  const epochMeans = new Float64Array(n);
  const noise = new Float64Array(n);
  const values = new Float64Array(K);
  const at = new Float64Array(K);
  const hat = new Float64Array(K);
  const atSum = new Float64Array(K);
  const hatSum = new Float64Array(K);
  const withK = new Float64Array(K);
  let flipSum = 0;
  let flipCount = 0;
  const unstable: string[] = [];
  for (let j = 0; j < n; j++) {
    const vi = which[j]!;
    xs[j] = reduced.x[vi]!;
    clusters[j] = index.group[vi]!;
    const k = slots.read(vi, values, kind === 'pass_fail');
    const c = slots.lastPasses;
    epochMeans[j] = reduceEpochs(values, 'mean', k);
    noise[j] = k >= 2 ? epochNoise(values, k) : NaN;
    if (kind === 'pass_fail') {
      passCurves(k, c, at, hat);
      for (let q = 0; q < k; q++) {
        atSum[q]! += at[q]!;
        hatSum[q]! += hat[q]!;
        withK[q]! += 1;
      }
      if (k >= 2) {
        flipSum += flipRate(k, c);
        flipCount++;
        if (c > 0 && c < k && unstable.length < UNSTABLE_LISTED) unstable.push(index.ids[vi]!);
      }
    }
    if (turns.due(K)) await turns.take();
  }
  const iv = reportedMean(xs, clustered ? clusters : null);
  const gaps = gapsOf(reduced, seen);
  const passAtK: Record<string, number> = {};
  const passHatK: Record<string, number> = {};
  if (kind === 'pass_fail') {
    for (let q = 0; q < K; q++) {
      if (withK[q]! === 0) continue;
      passAtK[String(q + 1)] = atSum[q]! / withK[q]!;
      passHatK[String(q + 1)] = hatSum[q]! / withK[q]!;
    }
  }
  return {
    model,
    n,
    mean: iv.mean,
    stderr: baseline ? null : iv.stderr,
    ci95: baseline ? null : iv.ci95,
    ci_method: iv.method,
    not_scored: gaps.notScored,
    not_scored_share: gaps.notScored === 0 ? 0 : gaps.notScored / (gaps.scored + gaps.notScored),
    verdicts_missing: gaps.missing,
    ...(baseline ? { role: 'baseline' as const } : {}),
    flip_rate: flipCount > 0 ? flipSum / flipCount : null,
    unstable,
    pass_at_k: passAtK,
    pass_hat_k: passHatK,
    epoch_noise_share: epochNoiseShare(epochMeans, noise),
  };
}

type RawPair = Omit<PairComparison, 'p_holm' | 'distinguishable' | 'verdict'> & { tooFewClusters: boolean };

/**
 * The paired comparison of `a` against `b` on the vignettes both have (diff = a − b), before Holm.
 * With `mcnemar` (K = 1, pass/fail) and no clustering: exact McNemar with Tango's interval.
 */
async function comparePair(
  a: string,
  b: string,
  xa: Float64Array,
  xb: Float64Array,
  index: VignetteIndex,
  clustered: boolean,
  mcnemar: boolean,
  turns: Turns,
): Promise<RawPair> {
  const size = Math.min(xa.length, xb.length);
  const va: number[] = [];
  const vb: number[] = [];
  const clusters: number[] = [];
  for (let vi = 0; vi < size; vi++) {
    if (Number.isNaN(xa[vi]!) || Number.isNaN(xb[vi]!)) continue;
    va.push(xa[vi]!);
    vb.push(xb[vi]!);
    clusters.push(index.group[vi]!);
    if (turns.due()) await turns.take();
  }
  const t = reportedPair(va, vb, mcnemar, clustered ? clusters : null);
  return {
    a,
    b,
    n: t.n,
    diff: t.diff,
    stderr: t.stderr,
    ci95: t.ci95,
    p_value: t.p_value,
    test: t.test,
    ci_method: t.method,
    min_detectable_diff: t.min_detectable_diff,
    tooFewClusters: t.tooFewClusters === true,
  };
}

/**
 * Holm across the family, and each pair's verdict: better only when the Holm-adjusted p of the
 * test shown is below 0.05; no verdict under MIN_VIGNETTES_TO_COMPARE shared vignettes, nor when
 * clustered over too few clusters (such a pair has no p, so it is outside Holm's family).
 */
function finishPairs(pairs: RawPair[]): PairComparison[] {
  const adjusted = holm(pairs.map((p) => p.p_value));
  return pairs.map(({ tooFewClusters, ...p }, i) => {
    const pHolm = adjusted[i] ?? null;
    const verdict: PairVerdict =
      p.n < MIN_VIGNETTES_TO_COMPARE
        ? 'too_few'
        : tooFewClusters
          ? 'too_few_clusters'
          : pHolm !== null && pHolm < 0.05 && p.diff !== 0
            ? p.diff > 0
              ? 'a_better'
              : 'b_better'
            : 'not_distinguishable';
    return { ...p, p_holm: pHolm, verdict, distinguishable: verdict === 'a_better' || verdict === 'b_better' };
  });
}

/** Over the vignettes `seen`: responses with a verdict, responses with none, single verdicts missing. */
function gapsOf(reduced: Reduced, seen: Int32Array): { scored: number; notScored: number; missing: number } {
  let scored = 0;
  let notScored = 0;
  let missing = 0;
  for (const vi of seen) {
    scored += reduced.scored[vi]!;
    notScored += reduced.notScored[vi]!;
    missing += reduced.missing[vi]!;
  }
  return { scored, notScored, missing };
}

function checkOptions(epochs: number, where: string): void {
  if (!(Number.isInteger(epochs) && epochs >= 1 && epochs <= 0xffff)) {
    throw new RangeError(`${where}: epochs must be an integer in 1..65535, got ${epochs}`);
  }
}

/** Vignette indices per group, by one counting pass (index order kept within each group). */
function byGroup(present: Int32Array, index: VignetteIndex): Int32Array[] {
  const counts = new Int32Array(index.groups.length);
  for (const vi of present) counts[index.group[vi]!]! += 1;
  const out = Array.from(counts, (c) => new Int32Array(c));
  const fill = new Int32Array(index.groups.length);
  for (const vi of present) {
    const g = index.group[vi]!;
    out[g]![fill[g]!++] = vi;
  }
  return out;
}

/** Clusters fewer than this, or one cluster holding more than half the vignettes, and the clustered figures rest on too little. */
const MIN_CLUSTERS = 10;

/** How the report's scored vignettes fall in the `by` key's clusters. */
interface Clustering {
  by: string;
  count: number;
  largestShare: number;
  /** Bell-McCaffrey degrees of freedom of a mean over all of them (NaN under two clusters). */
  df: number;
}

/** What the reader must weigh before the figures: responses not scored, too few clusters, too few vignettes. */
function reportWarnings(models: readonly ModelScore[], pairs: readonly PairComparison[], clustering: Clustering | null): string[] {
  const warnings: string[] = [];
  for (const m of models) {
    if (m.not_scored > 0) {
      warnings.push(
        `${m.model}: ${m.not_scored} response${m.not_scored === 1 ? '' : 's'} (${(100 * m.not_scored_share).toFixed(1)} %) not scored (a judge failed or gave no verdict, or the record could not be scored): left out as missing, not counted as fails.`,
      );
    } else if (m.verdicts_missing > 0) {
      warnings.push(`${m.model}: ${m.verdicts_missing} judge verdict${m.verdicts_missing === 1 ? '' : 's'} missing: those responses are scored by the judges that answered.`);
    }
  }
  if (clustering !== null && (clustering.count < MIN_CLUSTERS || clustering.largestShare > DOMINANT_CLUSTER_SHARE)) {
    const dominant = clustering.largestShare > DOMINANT_CLUSTER_SHARE;
    const count = `${clustering.count} cluster${clustering.count === 1 ? '' : 's'}`;
    const why = dominant ? `${count}, one holding ${(100 * clustering.largestShare).toFixed(0)} % of the vignettes` : `only ${count} (fewer than ${MIN_CLUSTERS})`;
    warnings.push(
      !enoughClusters(clustering.df)
        ? `Clustering by "${clustering.by}" rests on ${why}: too few independent clusters for a clustered interval (under ${MIN_CLUSTER_DF} degrees of freedom, about four even clusters), so no interval, p or verdict is given. Report without --by, or by a key with more clusters.`
        : `Clustering by "${clustering.by}" rests on ${why}: the clustered intervals and p-values (CR2 with Bell-McCaffrey degrees of freedom${dominant ? ', floored at the unclustered standard error' : ''}) rest on few independent clusters; read them as rough.`,
    );
  }
  const few = pairs.filter((p) => p.verdict === 'too_few').length;
  if (few > 0) warnings.push(`${few} pair${few === 1 ? '' : 's'} share${few === 1 ? 's' : ''} fewer than ${MIN_VIGNETTES_TO_COMPARE} vignettes: too few vignettes to compare, no verdict given.`);
  return warnings;
}

/** The report of one run for one scorer version, from its cells. */
export async function buildScoreReport(options: ReportOptions, cells: ScoreCells): Promise<ScoreReport> {
  checkOptions(options.epochs, `report of run ${options.runId}`);
  const reducer = options.reducer ?? 'mean';
  const by = options.by ?? null;
  const turns = new Turns();
  const index = new VignetteIndex();
  const baseline = options.pairwiseBaseline;
  const run = new RunCells(index, options.epochs, baseline);
  await run.read(cells, turns);
  const kind = options.kind;
  const passFail = kind === 'pass_fail';

  const reduced = new Map<string, Reduced>();
  const models: ModelScore[] = [];
  // A model none of whose responses got a verdict has no mean: it leaves the leaderboard, named in a warning.
  const unscored: string[] = [];
  let unscoredResponses = 0;
  for (const name of run.orderedModels(options.models)) {
    const slots = run.models.get(name)!;
    const r = await reduceModel(slots, index.ids.length, reducer, passFail, turns);
    if (r.present.length === 0) {
      unscored.push(name);
      unscoredResponses += gapsOf(r, r.seen).notScored;
      continue;
    }
    reduced.set(name, r);
    models.push(await modelScore(name, slots, r, r.present, r.seen, index, kind, by !== null, turns, name === baseline));
  }
  const names = models.map((m) => m.model);

  const mcnemar = passFail && options.epochs === 1;
  const raw: RawPair[] = [];
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) {
      const a = names[i]!;
      const b = names[j]!;
      raw.push(await comparePair(a, b, reduced.get(a)!.x, reduced.get(b)!.x, index, by !== null, mcnemar, turns));
      // A pair's test is a few ms when its degrees of freedom are new (detectable-difference.ts): read the clock after each.
      if (turns.due(1024)) await turns.take();
    }
  }
  const pairs = finishPairs(raw);
  const clustering = by === null ? null : clusteringOf(reduced, names, index, by);

  const report: ScoreReport = {
    run_id: options.runId,
    scorer: options.scorer,
    scorer_version: options.scorerVersion,
    kind,
    epochs: options.epochs,
    reducer,
    by,
    models,
    pairs,
    pending: options.pending ?? 0,
    not_scored: models.reduce((sum, m) => sum + m.not_scored, unscoredResponses),
    not_scored_reason: options.failure ?? null,
    failed: options.failed ?? 0,
    failure: options.failure ?? null,
    attempt: options.attempt ?? 'first',
    warnings: [
      ...unscored.map((m) => `${m}: not one response scored (every judge failed or gave no verdict, or the scorer could not score them): left out.`),
      ...reportWarnings(models, pairs, clustering),
      ...(options.failure ? [`Last reason a record could not be scored: ${options.failure} (scoring the run again retries those records).`] : []),
    ],
  };
  if (options.declaredKind !== undefined && options.declaredKind !== kind) report.declared_kind = options.declaredKind;
  if (run.agreement.seen) report.judges = await run.agreement.report(kind);
  if (baseline !== undefined) report.pairwise = { baseline };
  if (by !== null) {
    const slices = index.groups.map((value) => ({ value, models: [] as ModelScore[] }));
    for (const name of names) {
      const r = reduced.get(name)!;
      const groups = byGroup(r.present, index);
      const seen = byGroup(r.seen, index);
      for (let g = 0; g < groups.length; g++) {
        if (groups[g]!.length === 0) continue;
        slices[g]!.models.push(await modelScore(name, run.models.get(name)!, r, groups[g]!, seen[g]!, index, kind, false, turns, name === baseline));
      }
    }
    report.slices = slices.filter((s) => s.models.length > 0).sort((p, q) => (p.value < q.value ? -1 : p.value > q.value ? 1 : 0));
  }
  return report;
}

/** How many clusters the scored vignettes fall in, the largest one's share, and the degrees of freedom they give. */
function clusteringOf(reduced: Map<string, Reduced>, names: readonly string[], index: VignetteIndex, by: string): Clustering {
  const sizes = new Map<number, number>();
  const counted = new Uint8Array(index.ids.length);
  let n = 0;
  for (const name of names) {
    for (const vi of reduced.get(name)!.present) {
      if (counted[vi] === 1) continue;
      counted[vi] = 1;
      n++;
      sizes.set(index.group[vi]!, (sizes.get(index.group[vi]!) ?? 0) + 1);
    }
  }
  let largest = 0;
  for (const size of sizes.values()) largest = Math.max(largest, size);
  return { by, count: sizes.size, largestShare: n === 0 ? 0 : largest / n, df: bellMcCaffreyDf([...sizes.values()]) };
}

/** What a comparison of two runs needs besides their cells. */
export interface ComparisonOptions {
  runA: string;
  runB: string;
  scorer: string;
  scorerVersionA: string;
  scorerVersionB: string;
  kind: ScorerKind;
  epochsA: number;
  epochsB: number;
  reducer?: EpochReducer;
  /** The leaderboard's order; models not named come after, as first seen. */
  models?: readonly string[];
}

/**
 * Two runs over the same manifest, paired by vignette id: for each model both ran, run B's reduced
 * scores against run A's. Each pair names `a` = `runB:model` and `b` = `runA:model`, so its `diff`
 * (a − b, as in every PairComparison) is B − A.
 */
export async function buildRunComparison(options: ComparisonOptions, cellsA: ScoreCells, cellsB: ScoreCells): Promise<RunComparison> {
  checkOptions(options.epochsA, `comparison, run ${options.runA}`);
  checkOptions(options.epochsB, `comparison, run ${options.runB}`);
  const reducer = options.reducer ?? 'mean';
  const turns = new Turns();
  const index = new VignetteIndex();
  const runA = new RunCells(index, options.epochsA);
  const runB = new RunCells(index, options.epochsB);
  await runA.read(cellsA, turns);
  await runB.read(cellsB, turns);

  const side = async (run: RunCells) => {
    const names = run.orderedModels(options.models);
    const reduced = new Map<string, Reduced>();
    const scores: ModelScore[] = [];
    for (const name of names) {
      const slots = run.models.get(name)!;
      const r = await reduceModel(slots, index.ids.length, reducer, options.kind === 'pass_fail', turns);
      reduced.set(name, r);
      scores.push(await modelScore(name, slots, r, r.present, r.seen, index, options.kind, false, turns));
    }
    return { names, reduced, scores };
  };
  const a = await side(runA);
  const b = await side(runB);

  const mcnemar = options.kind === 'pass_fail' && options.epochsA === 1 && options.epochsB === 1;
  const raw: RawPair[] = [];
  for (const model of a.names) {
    if (!b.reduced.has(model)) continue;
    raw.push(
      await comparePair(
        `${options.runB}:${model}`,
        `${options.runA}:${model}`,
        b.reduced.get(model)!.x,
        a.reduced.get(model)!.x,
        index,
        false,
        mcnemar,
        turns,
      ),
    );
  }
  return {
    run_a: options.runA,
    run_b: options.runB,
    scorer: options.scorer,
    scorer_version_a: options.scorerVersionA,
    scorer_version_b: options.scorerVersionB,
    reducer,
    models_a: a.scores,
    models_b: b.scores,
    pairs: finishPairs(raw),
  };
}
