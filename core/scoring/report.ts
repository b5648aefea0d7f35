/**
 * Builds a `ScoreReport` (one run) and a `RunComparison` (two runs of one manifest) from streamed
 * score cells, in any order, in bounded memory and without holding the event loop.
 *
 * Input: one `ScoreCell` per verdict on one response, i.e. per (model, vignette, epoch) and judge.
 * The store may hand them over in whatever order its query finds fastest (by record, by model, by
 * vignette): each cell lands in its (model, vignette, epoch) slot. Several cells for one slot (a
 * scorer with several judges) are averaged into that epoch's value, and the epoch passes when most
 * of its verdicts passed. The caller picks which attempt feeds the statistics (the first one,
 * unless asked otherwise) before the cells reach here.
 *
 * Memory: per model three typed arrays of vignettes × epochs slots (value sum, verdict count, pass
 * count: 12 bytes a slot) and one id per vignette, so 1,000,000 scores of 2 models × 5 epochs ×
 * 100,000 vignettes take about 13 MB whatever the order. Time: the cells are read once and every
 * statistic is an O(n) pass; all loops hand the event loop back every ~10 ms.
 * Runs on: Node (core).
 */
import type { EpochReducer, ModelScore, PairComparison, RunComparison, ScoreReport } from './report-shape.js';
import {
  clusteredMeanInterval,
  epochNoise,
  epochNoiseShare,
  flipRate,
  holm,
  mcnemarExact,
  meanInterval,
  pairedTTest,
  passCurves,
  reduceEpochs,
} from './statistics.js';
import { type ModelSlots, RunCells, type ScoreCells, Turns, VignetteIndex } from './report-cells.js';

export type { ScoreCell, ScoreCells } from './report-cells.js';

/** What the report needs to know besides the cells: the run, the scorer and how to reduce. */
export interface ReportOptions {
  runId: string;
  scorer: string;
  scorerVersion: string;
  kind: 'pass_fail' | 'graded';
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
  /** Records this scorer version could not score, and the last reason why (shown, not used). */
  failed?: number;
  failure?: string | null;
  /** Which attempt of each record the cells are (default `first`): said in the report, not used. */
  attempt?: 'first' | 'final';
  /** A pairwise judge's baseline (a model, or a baseline file): means are win rates against it. */
  pairwiseBaseline?: string | undefined;
}

/** How many unstable vignette ids a model lists. */
const UNSTABLE_LISTED = 100;

/** Each vignette's reduced value x_i (NaN where the model has no score) and what it took. */
interface Reduced {
  x: Float64Array;
  /** Vignettes with at least one score, in index order. */
  present: Int32Array;
}

async function reduceModel(slots: ModelSlots, vignettes: number, reducer: EpochReducer, turns: Turns): Promise<Reduced> {
  const x = new Float64Array(vignettes).fill(NaN);
  const present: number[] = [];
  const values = new Float64Array(slots.epochs);
  for (let vi = 0; vi < vignettes; vi++) {
    const k = slots.read(vi, values);
    if (k > 0) {
      x[vi] = reduceEpochs(values, reducer, k);
      present.push(vi);
    }
    if (turns.due(slots.epochs)) await turns.take();
  }
  return { x, present: Int32Array.from(present) };
}

/** One model's leaderboard line over the vignettes `which` (indices with a score). */
async function modelScore(
  model: string,
  slots: ModelSlots,
  reduced: Reduced,
  which: Int32Array,
  index: VignetteIndex,
  kind: 'pass_fail' | 'graded',
  clustered: boolean,
  turns: Turns,
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
    const k = slots.read(vi, values);
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
  const iv = clustered ? clusteredMeanInterval(xs, clusters) : meanInterval(xs);
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
    stderr: iv.stderr,
    ci95: iv.ci95,
    flip_rate: flipCount > 0 ? flipSum / flipCount : null,
    unstable,
    pass_at_k: passAtK,
    pass_hat_k: passHatK,
    epoch_noise_share: epochNoiseShare(epochMeans, noise),
  };
}

/**
 * The paired comparison of `a` against `b` on the vignettes both have (diff = a − b), before Holm.
 * With `mcnemar`, the p-value is the exact McNemar test on the 0/1 values (K = 1, pass/fail).
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
): Promise<Omit<PairComparison, 'p_holm' | 'distinguishable'>> {
  const size = Math.min(xa.length, xb.length);
  const d: number[] = [];
  const clusters: number[] = [];
  let onlyA = 0;
  let onlyB = 0;
  for (let vi = 0; vi < size; vi++) {
    const va = xa[vi]!;
    const vb = xb[vi]!;
    if (Number.isNaN(va) || Number.isNaN(vb)) continue;
    d.push(va - vb);
    clusters.push(index.group[vi]!);
    if (va >= 0.5 && vb < 0.5) onlyA++;
    else if (vb >= 0.5 && va < 0.5) onlyB++;
    if (turns.due()) await turns.take();
  }
  const t = pairedTTest(d, clustered ? clusters : undefined);
  return {
    a,
    b,
    n: t.n,
    diff: t.diff,
    stderr: t.stderr,
    ci95: t.ci95,
    p_value: mcnemar && t.n >= 1 ? mcnemarExact(onlyA, onlyB) : t.p_value,
    test: mcnemar ? 'mcnemar_exact' : 'paired_t',
    min_detectable_diff: t.min_detectable_diff,
  };
}

/** Holm across the family, and whether each interval keeps clear of zero. */
function finishPairs(pairs: Omit<PairComparison, 'p_holm' | 'distinguishable'>[]): PairComparison[] {
  const adjusted = holm(pairs.map((p) => p.p_value));
  return pairs.map((p, i) => ({
    ...p,
    p_holm: adjusted[i] ?? null,
    distinguishable: p.ci95 !== null && (p.ci95[0] > 0 || p.ci95[1] < 0),
  }));
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

/** The report of one run for one scorer version, from its cells. */
export async function buildScoreReport(options: ReportOptions, cells: ScoreCells): Promise<ScoreReport> {
  checkOptions(options.epochs, `report of run ${options.runId}`);
  const reducer = options.reducer ?? 'mean';
  const by = options.by ?? null;
  const turns = new Turns();
  const index = new VignetteIndex();
  const run = new RunCells(index, options.epochs);
  await run.read(cells, turns);

  const names = run.orderedModels(options.models);
  const reduced = new Map<string, Reduced>();
  const models: ModelScore[] = [];
  for (const name of names) {
    const slots = run.models.get(name)!;
    const r = await reduceModel(slots, index.ids.length, reducer, turns);
    reduced.set(name, r);
    models.push(await modelScore(name, slots, r, r.present, index, options.kind, by !== null, turns));
  }

  const mcnemar = options.kind === 'pass_fail' && options.epochs === 1;
  const raw: Omit<PairComparison, 'p_holm' | 'distinguishable'>[] = [];
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) {
      const a = names[i]!;
      const b = names[j]!;
      raw.push(await comparePair(a, b, reduced.get(a)!.x, reduced.get(b)!.x, index, by !== null, mcnemar, turns));
    }
  }

  const report: ScoreReport = {
    run_id: options.runId,
    scorer: options.scorer,
    scorer_version: options.scorerVersion,
    kind: options.kind,
    epochs: options.epochs,
    reducer,
    by,
    models,
    pairs: finishPairs(raw),
    pending: options.pending ?? 0,
    failed: options.failed ?? 0,
    failure: options.failure ?? null,
    attempt: options.attempt ?? 'first',
  };
  if (run.agreement.seen) report.judges = await run.agreement.report(options.kind);
  if (options.pairwiseBaseline !== undefined) report.pairwise = { baseline: options.pairwiseBaseline };
  if (by !== null) {
    const slices = index.groups.map((value) => ({ value, models: [] as ModelScore[] }));
    for (const name of names) {
      const r = reduced.get(name)!;
      const groups = byGroup(r.present, index);
      for (let g = 0; g < groups.length; g++) {
        if (groups[g]!.length === 0) continue;
        slices[g]!.models.push(await modelScore(name, run.models.get(name)!, r, groups[g]!, index, options.kind, false, turns));
      }
    }
    report.slices = slices.filter((s) => s.models.length > 0).sort((p, q) => (p.value < q.value ? -1 : p.value > q.value ? 1 : 0));
  }
  return report;
}

/** What a comparison of two runs needs besides their cells. */
export interface ComparisonOptions {
  runA: string;
  runB: string;
  scorer: string;
  scorerVersionA: string;
  scorerVersionB: string;
  kind: 'pass_fail' | 'graded';
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
      const r = await reduceModel(slots, index.ids.length, reducer, turns);
      reduced.set(name, r);
      scores.push(await modelScore(name, slots, r, r.present, index, options.kind, false, turns));
    }
    return { names, reduced, scores };
  };
  const a = await side(runA);
  const b = await side(runB);

  const mcnemar = options.kind === 'pass_fail' && options.epochsA === 1 && options.epochsB === 1;
  const raw: Omit<PairComparison, 'p_holm' | 'distinguishable'>[] = [];
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
