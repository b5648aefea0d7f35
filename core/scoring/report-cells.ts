/**
 * The cells of a score report as they arrive: what one cell is, and where it lands. Vignette ids
 * become dense indices (shared by the two runs of a comparison so their slots pair up); each model
 * keeps typed arrays of vignettes x epochs slots (value sum, verdict count, pass count, missing
 * verdicts); `Turns`
 * hands the event loop back while a long stream or loop runs. `report.ts` reads the slots.
 * Runs on: Node (core).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
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
  /**
   * No verdict: the judge failed or answered with no readable verdict, or the scorer could not
   * score the record. Missing data: counted as not scored, never as a fail or a loss; `value` and
   * `passed` are ignored.
   */
  missing?: boolean;
}

/**
 * The cells of one run: a plain iterable, or an async one of single cells or of batches (arrays)
 * of cells. Batches are the fast path for a store query read a page at a time: one await per page
 * instead of one per cell.
 */
export type ScoreCells = AsyncIterable<ScoreCell | readonly ScoreCell[]> | Iterable<ScoreCell>;

/** Text a group-less vignette is sliced under. */
export const NO_GROUP = '(none)';
/** The longest the report keeps the event loop before giving it a turn. */
const SLICE_MS = 10;

/**
 * Hands the event loop back once SLICE_MS have passed. `due(weight)` adds the work of one step (a
 * cell, or a vignette of K epochs) and reads the clock only every ~1,024 units of work, so a hot
 * loop pays an await only when a turn is actually owed, and a run of many epochs checks as often.
 */
export class Turns {
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
export class VignetteIndex {
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
export class ModelSlots {
  sum: Float64Array;
  count: Uint16Array;
  passes: Uint16Array;
  missing: Uint16Array;

  constructor(readonly epochs: number) {
    // Room for some vignettes to start with, whatever K is (a few hundred KB), in whole vignettes
    // (doubling keeps it so); grows as they come.
    const slots = epochs * Math.ceil(16_384 / epochs);
    this.sum = new Float64Array(slots);
    this.count = new Uint16Array(slots);
    this.passes = new Uint16Array(slots);
    this.missing = new Uint16Array(slots);
  }

  /** Adds one verdict; false (and nothing added) when the slot already holds 65,535. */
  add(vi: number, epoch: number, value: number, passed: boolean): boolean {
    const at = vi * this.epochs + epoch - 1;
    if (at >= this.sum.length) this.grow(at);
    if (this.count[at]! + this.missing[at]! === 0xffff) return false;
    this.sum[at]! += value;
    this.count[at]! += 1;
    if (passed) this.passes[at]! += 1;
    return true;
  }

  /** Counts one missing verdict; false when the slot already holds 65,535. */
  addMissing(vi: number, epoch: number): boolean {
    const at = vi * this.epochs + epoch - 1;
    if (at >= this.sum.length) this.grow(at);
    if (this.count[at]! + this.missing[at]! === 0xffff) return false;
    this.missing[at]! += 1;
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
    const missing = new Uint16Array(size);
    missing.set(this.missing);
    this.sum = sum;
    this.count = count;
    this.passes = passes;
    this.missing = missing;
  }

  /** Passes of the vignette last `read`: epochs where most verdicts passed. */
  lastPasses = 0;
  /** Of the vignette last `read`: epochs with no verdict at all, and single verdicts missing. */
  lastNotScored = 0;
  lastMissing = 0;

  /**
   * Epoch values of vignette vi into `into`; returns how many epochs have a verdict (passes:
   * lastPasses). The one pass rule: an epoch passes when more than half of its verdicts pass (a
   * 1–1 split of two judges fails). With `passFail` an epoch's value is that rule's 1 or 0, so the
   * mean, pass@k, pass^k, the flip rate and McNemar all count the same passes; graded values are
   * the mean of the epoch's verdicts.
   */
  read(vi: number, into: Float64Array, passFail = false): number {
    let k = 0;
    let c = 0;
    let notScored = 0;
    let missing = 0;
    const base = vi * this.epochs;
    if (base + this.epochs <= this.sum.length) {
      for (let e = 0; e < this.epochs; e++) {
        const n = this.count[base + e]!;
        missing += this.missing[base + e]!;
        if (n === 0) {
          if (this.missing[base + e]! > 0) notScored++;
          continue;
        }
        const passed = this.passes[base + e]! * 2 > n;
        into[k++] = passFail ? (passed ? 1 : 0) : this.sum[base + e]! / n;
        if (passed) c++;
      }
    }
    this.lastPasses = c;
    this.lastNotScored = notScored;
    this.lastMissing = missing;
    return k;
  }
}

/** All the cells of one run, by model. */
export class RunCells {
  readonly models = new Map<string, ModelSlots>();
  readonly agreement: JudgeAgreement;
  private lastModel: string | null = null;
  private lastSlots: ModelSlots | undefined;

  /** `notJudged`: a model whose verdicts stay out of the judges' agreement (a pairwise scorer's baseline, scored 0.5 by definition). */
  constructor(
    readonly index: VignetteIndex,
    readonly epochs: number,
    private readonly notJudged?: string,
  ) {
    this.agreement = new JudgeAgreement(epochs);
  }

  add(cell: ScoreCell, at: number): void {
    if (typeof cell.model !== 'string' || cell.model === '') throw new RangeError(`score cell ${at}: no model`);
    if (typeof cell.vignetteId !== 'string') throw new RangeError(`score cell ${at}: no vignette id`);
    if (!(Number.isInteger(cell.epoch) && cell.epoch >= 1 && cell.epoch <= this.epochs)) {
      throw new RangeError(`score cell ${at} (${cell.model}, ${cell.vignetteId}): epoch ${cell.epoch} is not in 1..${this.epochs}`);
    }
    if (cell.missing !== true && !(cell.value >= 0 && cell.value <= 1)) {
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
    const missing = cell.missing === true;
    if (!(missing ? slots.addMissing(vi, cell.epoch) : slots.add(vi, cell.epoch, cell.value, cell.passed === true))) {
      throw new RangeError(`score cell ${at} (${cell.model}, ${cell.vignetteId}, epoch ${cell.epoch}): more than 65,535 verdicts on one response`);
    }
    if (missing) return;
    if (typeof cell.judge === 'string' && cell.model !== this.notJudged) this.agreement.add(cell.model, vi, cell.epoch, cell.judge, cell.value);
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

