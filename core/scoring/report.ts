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
import { setImmediate as nextTurn } from 'node:timers/promises';
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
import { JudgeAgreement } from './judge/judge-agreement.js';

/** One verdict of one scorer on one response. */
export interface ScoreCell {
  model: string;
  vignetteId: string;
  /** From 1 to the run's epochs. */
  epoch: number;
  /** In [0, 1]; for a pass/fail scorer 1 when passed, 0 otherwise. */
  value: number;
  /** For pass/fail scorers; null for graded ones. */
  passed: boolean | null;
  /**
   * The vignette's value of the metadata key the report is sliced and clustered by (`by`),
   * as text; null or absent when the vignette has no such key. Read from a vignette's first cell.
   */
  group?: string | null;
  /** The judge that gave this verdict (LLM-judge scorers): the cells of several judges give their agreement. */
  judge?: string | null;
}

/**
 * The cells of one run: a plain iterable, or an async one of single cells or of batches (arrays)
 * of cells. Batches are the fast path for a store query read a page at a time: one await per page
 * instead of one per cell.
 */
export type ScoreCells = AsyncIterable<ScoreCell | readonly ScoreCell[]> | Iterable<ScoreCell>;

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
  /** Which attempt of each record the cells are (default `first`): said in the report, not used. */
  attempt?: 'first' | 'final';
  /** A pairwise judge's baseline (a model, or a baseline file): means are win rates against it. */
  pairwiseBaseline?: string | undefined;
}

/** Text a group-less vignette is sliced under. */
export const NO_GROUP = '(none)';
/** How many unstable vignette ids a model lists. */
const UNSTABLE_LISTED = 100;
/** The longest the report keeps the event loop before giving it a turn. */
const SLICE_MS = 10;

/**
 * Hands the event loop back once SLICE_MS have passed. `due(weight)` adds the work of one step (a
 * cell, or a vignette of K epochs) and reads the clock only every ~1,024 units of work, so a hot
 * loop pays an await only when a turn is actually owed, and a run of many epochs checks as often.
 */
class Turns {
  private since = performance.now();
  private work = 0;

  due(weight = 1): boolean {
    this.work += weight;
    if (this.work < 1024) return false;
    this.work = 0;
    return performance.now() - this.since >= SLICE_MS;
  }

  async take(): Promise<void> {
    await nextTurn();
    this.since = performance.now();
  }
}

/** Vignette ids to dense indices, shared by both runs of a comparison so their slots pair up. */
class VignetteIndex {
  readonly ids: string[] = [];
  private readonly byId = new Map<string, number>();
  /** Group index per vignette (-1 until a cell names it). */
  group = new Int32Array(1024).fill(-1);
  readonly groups: string[] = [];
  private readonly groupById = new Map<string, number>();

  private lastId: string | null = null;
  private lastIndex = -1;

  indexOf(id: string): number {
    // Cells mostly come record by record: consecutive ones share their vignette.
    if (id === this.lastId) return this.lastIndex;
    let i = this.byId.get(id);
    if (i === undefined) {
      i = this.ids.length;
      this.ids.push(id);
      this.byId.set(id, i);
      if (i >= this.group.length) {
        const grown = new Int32Array(this.group.length * 2).fill(-1);
        grown.set(this.group);
        this.group = grown;
      }
    }
    this.lastId = id;
    this.lastIndex = i;
    return i;
  }

  setGroup(vi: number, value: string | null | undefined): void {
    if (this.group[vi] !== -1) return;
    const key = value ?? NO_GROUP;
    let g = this.groupById.get(key);
    if (g === undefined) {
      g = this.groups.length;
      this.groups.push(key);
      this.groupById.set(key, g);
    }
    this.group[vi] = g;
  }
}

/** One model's slots: vignettes × epochs, growing by doubling. */
class ModelSlots {
  sum: Float64Array;
  count: Uint16Array;
  passes: Uint16Array;

  constructor(readonly epochs: number) {
    // Room for some vignettes to start with, whatever K is (a few hundred KB), in whole vignettes
    // (doubling keeps it so); grows as they come.
    const slots = epochs * Math.ceil(16_384 / epochs);
    this.sum = new Float64Array(slots);
    this.count = new Uint16Array(slots);
    this.passes = new Uint16Array(slots);
  }

  /** Adds one verdict; false (and nothing added) when the slot already holds 65,535. */
  add(vi: number, epoch: number, value: number, passed: boolean): boolean {
    const at = vi * this.epochs + epoch - 1;
    if (at >= this.sum.length) this.grow(at);
    if (this.count[at] === 0xffff) return false;
    this.sum[at]! += value;
    this.count[at]! += 1;
    if (passed) this.passes[at]! += 1;
    return true;
  }

  private grow(at: number): void {
    let size = this.sum.length;
    while (size <= at) size *= 2;
    const sum = new Float64Array(size);
    sum.set(this.sum);
    const count = new Uint16Array(size);
    count.set(this.count);
    const passes = new Uint16Array(size);
    passes.set(this.passes);
    this.sum = sum;
    this.count = count;
    this.passes = passes;
  }

  /** Passes of the vignette last `read`: epochs where most verdicts passed. */
  lastPasses = 0;

  /** Epoch values of vignette vi into `into`; returns how many epochs it has (passes: lastPasses). */
  read(vi: number, into: Float64Array): number {
    let k = 0;
    let c = 0;
    const base = vi * this.epochs;
    if (base + this.epochs <= this.sum.length) {
      for (let e = 0; e < this.epochs; e++) {
        const n = this.count[base + e]!;
        if (n === 0) continue;
        into[k++] = this.sum[base + e]! / n;
        if (this.passes[base + e]! * 2 > n) c++;
      }
    }
    this.lastPasses = c;
    return k;
  }
}

/** All the cells of one run, by model. */
class RunCells {
  readonly models = new Map<string, ModelSlots>();
  readonly agreement: JudgeAgreement;
  private lastModel: string | null = null;
  private lastSlots: ModelSlots | undefined;

  constructor(
    readonly index: VignetteIndex,
    readonly epochs: number,
  ) {
    this.agreement = new JudgeAgreement(epochs);
  }

  add(cell: ScoreCell, at: number): void {
    if (typeof cell.model !== 'string' || cell.model === '') throw new RangeError(`score cell ${at}: no model`);
    if (typeof cell.vignetteId !== 'string') throw new RangeError(`score cell ${at}: no vignette id`);
    if (!(Number.isInteger(cell.epoch) && cell.epoch >= 1 && cell.epoch <= this.epochs)) {
      throw new RangeError(`score cell ${at} (${cell.model}, ${cell.vignetteId}): epoch ${cell.epoch} is not in 1..${this.epochs}`);
    }
    if (!(cell.value >= 0 && cell.value <= 1)) {
      throw new RangeError(`score cell ${at} (${cell.model}, ${cell.vignetteId}, epoch ${cell.epoch}): value ${cell.value} is not in [0, 1]`);
    }
    let slots = cell.model === this.lastModel ? this.lastSlots : this.models.get(cell.model);
    if (!slots) {
      slots = new ModelSlots(this.epochs);
      this.models.set(cell.model, slots);
    }
    this.lastModel = cell.model;
    this.lastSlots = slots;
    const vi = this.index.indexOf(cell.vignetteId);
    this.index.setGroup(vi, cell.group);
    if (!slots.add(vi, cell.epoch, cell.value, cell.passed === true)) {
      throw new RangeError(`score cell ${at} (${cell.model}, ${cell.vignetteId}, epoch ${cell.epoch}): more than 65,535 verdicts on one response`);
    }
    if (typeof cell.judge === 'string') this.agreement.add(cell.model, vi, cell.epoch, cell.judge, cell.value);
  }

  async read(cells: ScoreCells, turns: Turns): Promise<void> {
    let at = 0;
    if (Symbol.asyncIterator in cells) {
      for await (const item of cells) {
        if (Array.isArray(item)) {
          for (const cell of item as readonly ScoreCell[]) {
            this.add(cell, at++);
            if (turns.due()) await turns.take();
          }
        } else {
          this.add(item as ScoreCell, at++);
          if (turns.due()) await turns.take();
        }
      }
    } else {
      for (const cell of cells) {
        this.add(cell, at++);
        if (turns.due()) await turns.take();
      }
    }
  }

  /** Model names: `order` first (those with cells), then the rest as first seen. */
  orderedModels(order: readonly string[] = []): string[] {
    const named = order.filter((m) => this.models.has(m));
    return [...named, ...[...this.models.keys()].filter((m) => !named.includes(m))];
  }
}

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
