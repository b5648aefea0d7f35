/**
 * The vignette × model matrix of one scorer on one run, a page of rows at a time: for each
 * vignette and model, one value per epoch (the mean of its judges' verdicts; for a pass/fail
 * scorer 1 when more than half of them passed, else 0), the epochs reduced to
 * one value as the report reduces them, how many epochs passed, the flip rate across epochs and
 * the judges' disagreement.
 *
 * In manifest order a page reads only its own vignettes' scores. Sorted by flip rate or by judge
 * disagreement, every vignette is read once, in ranges sized to about SCORES_PER_RANGE verdicts with
 * a turn of the event loop between ranges, and only the best `cursor + limit` are kept (a bounded
 * heap), so a run of any size is ordered in O(n log(page)) time and O(page) memory.
 * Runs on: Node (core).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { MatrixScore, VignetteHead } from '../store/score-store.js';
import type { EpochReducer } from './report-shape.js';
import { flipRate, reduceEpochs } from './statistics.js';
import type { ScorerKind } from '../domain.js';

export type MatrixSort = 'vignette' | 'flip_rate' | 'judge_disagreement';

export interface ScoreMatrixCell {
  model: string;
  /** The epochs reduced to one value (the page's reducer); null while no epoch has a score. */
  reduced: number | null;
  /** One value per epoch, index = epoch - 1 (the mean of its judges' verdicts); null where that epoch has no score (yet). */
  epochs: (number | null)[];
  /** Epochs with a score. */
  scored: number;
  /** Pass/fail scorers: epochs whose verdicts mostly passed; null for graded scorers. */
  passed: number | null;
  /** Pass/fail scorers with 2+ scored epochs: the chance two of them disagree, 2c(K − c)/(K(K − 1)). */
  flipRate: number | null;
  /** The spread of the judges' values (max − min), mean over the epochs two or more judges scored; null otherwise. */
  judgeDisagreement: number | null;
}

export interface ScoreMatrixRow {
  vignetteId: string;
  metadata?: Record<string, unknown>;
  cells: ScoreMatrixCell[];
}

export interface ScoreMatrixPage {
  runId: string;
  scorer: string;
  scorerVersion: string;
  kind: ScorerKind;
  reducer: EpochReducer;
  sort: MatrixSort;
  models: string[];
  epochs: number;
  rows: ScoreMatrixRow[];
  /** Vignettes in the run: rows in every order. */
  total: number;
  /** Pass back as `cursor` for the next page; null at the end. */
  nextCursor: number | null;
}

/** Where the matrix reads a run's scores and vignettes (the score store). */
export interface MatrixSource {
  scores(lo: number, hi: number): MatrixScore[];
  heads(lo: number, hi: number): VignetteHead[];
}

export interface MatrixOptions {
  runId: string;
  scorer: string;
  scorerVersion: string;
  kind: ScorerKind;
  /** The run's models: the matrix's columns, in this order. */
  models: readonly string[];
  epochs: number;
  /** The run's vignettes, indexed 0..vignettes − 1. */
  vignettes: number;
  /** Judges of the scorer (at least 1 for the size of a range). */
  judges: number;
  reducer: EpochReducer;
  sort: MatrixSort;
  cursor: number;
  limit: number;
}

/** About this many verdicts are read between two turns of the event loop (a few ms of work). */
const SCORES_PER_RANGE = 1000;

/** The cells of the vignettes of one range, by vignette index then model. */
function cellsOf(scores: readonly MatrixScore[], models: readonly string[], epochs: number, kind: ScorerKind, reducer: EpochReducer) {
  const column = new Map(models.map((m, i) => [m, i]));
  // Per (vignette, model, epoch): every judge's value and whether it passed.
  const slots = new Map<number, { values: number[]; passes: number }[][]>();
  for (const s of scores) {
    const col = column.get(s.model);
    if (col === undefined || s.epoch < 1 || s.epoch > epochs) continue;
    let row = slots.get(s.vignetteIdx);
    if (!row) {
      row = models.map(() => Array.from({ length: epochs }, () => ({ values: [] as number[], passes: 0 })));
      slots.set(s.vignetteIdx, row);
    }
    const slot = row[col]![s.epoch - 1]!;
    slot.values.push(s.value);
    if (s.passed === true) slot.passes += 1;
  }
  const out = new Map<number, ScoreMatrixCell[]>();
  for (const [idx, row] of slots) out.set(idx, row.map((epochSlots, col) => toCell(models[col]!, epochSlots, kind, reducer)));
  return out;
}

function toCell(model: string, slots: readonly { values: number[]; passes: number }[], kind: ScorerKind, reducer: EpochReducer): ScoreMatrixCell {
  const epochs: (number | null)[] = [];
  const scoredValues: number[] = [];
  let passed = 0;
  let spreadSum = 0;
  let spreadCount = 0;
  for (const slot of slots) {
    const n = slot.values.length;
    if (n === 0) {
      epochs.push(null);
      continue;
    }
    // The epoch passes when more than half of its verdicts passed, as in the report, and a
    // pass/fail epoch's value is that 1 or 0 (a 1-1 split of two judges fails).
    const pass = slot.passes * 2 > n;
    const value = kind === 'pass_fail' ? (pass ? 1 : 0) : slot.values.reduce((a, b) => a + b, 0) / n;
    epochs.push(value);
    scoredValues.push(value);
    if (pass) passed += 1;
    if (n >= 2) {
      spreadSum += Math.max(...slot.values) - Math.min(...slot.values);
      spreadCount += 1;
    }
  }
  const scored = scoredValues.length;
  return {
    model,
    reduced: scored === 0 ? null : reduceEpochs(scoredValues, reducer),
    epochs,
    scored,
    passed: kind === 'pass_fail' && scored > 0 ? passed : null,
    flipRate: kind === 'pass_fail' && scored >= 2 ? flipRate(scored, passed) : null,
    judgeDisagreement: spreadCount === 0 ? null : spreadSum / spreadCount,
  };
}

function emptyCell(model: string, epochs: number): ScoreMatrixCell {
  return { model, reduced: null, epochs: new Array<null>(epochs).fill(null), scored: 0, passed: null, flipRate: null, judgeDisagreement: null };
}

/** A row's place in a sorted order: its largest value over the models (−1 without one). */
function sortKey(cells: readonly ScoreMatrixCell[], sort: Exclude<MatrixSort, 'vignette'>): number {
  let key = -1;
  for (const c of cells) {
    const v = sort === 'flip_rate' ? c.flipRate : c.judgeDisagreement;
    if (v !== null && v > key) key = v;
  }
  return key;
}

/**
 * The `size` best vignettes seen so far: a heap whose root is the worst kept. Better = larger key,
 * then smaller index (manifest order breaks ties), so the result does not depend on the scan.
 */
class TopVignettes {
  private readonly keys: number[] = [];
  private readonly idx: number[] = [];

  constructor(private readonly size: number) {}

  private worse(i: number, j: number): boolean {
    return this.keys[i]! < this.keys[j]! || (this.keys[i] === this.keys[j] && this.idx[i]! > this.idx[j]!);
  }

  private swap(i: number, j: number): void {
    [this.keys[i], this.keys[j]] = [this.keys[j]!, this.keys[i]!];
    [this.idx[i], this.idx[j]] = [this.idx[j]!, this.idx[i]!];
  }

  offer(key: number, idx: number): void {
    if (this.size === 0) return;
    if (this.keys.length === this.size) {
      // Scanned in index order, an equal key ranks after every kept one.
      if (key <= this.keys[0]!) return;
      this.keys[0] = key;
      this.idx[0] = idx;
      this.down(0);
      return;
    }
    this.keys.push(key);
    this.idx.push(idx);
    for (let i = this.keys.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!this.worse(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.keys.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < n && this.worse(l, w)) w = l;
      if (r < n && this.worse(r, w)) w = r;
      if (w === i) return;
      this.swap(i, w);
      i = w;
    }
  }

  /** The kept vignettes' indexes, best first. */
  ranked(): number[] {
    const order = this.keys.map((_, i) => i);
    order.sort((a, b) => (this.worse(a, b) ? 1 : this.worse(b, a) ? -1 : 0));
    return order.map((i) => this.idx[i]!);
  }
}

/** Vignette indexes in runs of consecutive ones, to read each run as one range. */
function ranges(indexes: readonly number[]): [number, number][] {
  const sorted = [...indexes].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && i === last[1] + 1) last[1] = i;
    else out.push([i, i]);
  }
  return out;
}

/** One page of the matrix. */
export async function buildScoreMatrix(options: MatrixOptions, source: MatrixSource): Promise<ScoreMatrixPage> {
  const { models, epochs, kind, reducer, sort, cursor, limit, vignettes } = options;
  const perVignette = Math.max(1, models.length * epochs * Math.max(1, options.judges));
  const span = Math.max(1, Math.floor(SCORES_PER_RANGE / perVignette));
  const end = Math.min(vignettes, cursor + limit);

  let page: number[];
  if (sort === 'vignette') {
    page = [];
    for (let i = cursor; i < end; i++) page.push(i);
  } else {
    const top = new TopVignettes(Math.max(0, end));
    for (let lo = 0; lo < vignettes; lo += span) {
      const hi = Math.min(vignettes, lo + span) - 1;
      const cells = cellsOf(source.scores(lo, hi), models, epochs, kind, reducer);
      for (let i = lo; i <= hi; i++) {
        const row = cells.get(i);
        top.offer(row ? sortKey(row, sort) : -1, i);
      }
      await nextTurn();
    }
    page = top.ranked().slice(cursor);
  }

  const rowsByIdx = new Map<number, ScoreMatrixRow>();
  for (const [from, to] of ranges(page)) {
    for (let lo = from; lo <= to; lo += span) {
      const hi = Math.min(to, lo + span - 1);
      const cells = cellsOf(source.scores(lo, hi), models, epochs, kind, reducer);
      for (const head of source.heads(lo, hi)) {
        rowsByIdx.set(head.idx, {
          vignetteId: head.id,
          ...(head.metadata === undefined ? {} : { metadata: head.metadata }),
          cells: cells.get(head.idx) ?? models.map((m) => emptyCell(m, epochs)),
        });
      }
      await nextTurn();
    }
  }
  return {
    runId: options.runId,
    scorer: options.scorer,
    scorerVersion: options.scorerVersion,
    kind,
    reducer,
    sort,
    models: [...models],
    epochs,
    rows: page.flatMap((i) => rowsByIdx.get(i) ?? []),
    total: vignettes,
    nextCursor: end < vignettes ? end : null,
  };
}
