/**
 * The decision of an adaptive run: for every pair of models, a betting confidence sequence
 * (confidence-sequence.ts) of their paired per-vignette difference, fed in the run's seeded order,
 * a batch at a time; after each batch a pair stops when its interval excludes 0 (decided, with its
 * winner), lies inside ±margin (equivalent), or the manifest is spent (undecided). Alpha is split
 * over the pairs (Bonferroni), so the chance that any pair's decision is wrong is at most alpha. A
 * model stays in contention while one of its pairs is open. Deterministic: the same rows in the same
 * order give the same decisions, which is what makes a resumed run decide as an uninterrupted one.
 * Runs on: Node (core); pure, no I/O.
 */
import { BettingConfidenceSequence } from './confidence-sequence.js';

export interface AdaptiveOptions {
  models: readonly string[];
  /** The manifest's vignettes: the finite population the order draws from. */
  population: number;
  alpha: number;
  /** Equivalence margin on the difference (0: never stop as equivalent). */
  margin: number;
  grid?: number;
}

export interface PairDecision {
  a: string;
  b: string;
  status: 'decided' | 'equivalent' | 'undecided';
  /** The better model of a decided pair. */
  winner: string | null;
  /** Vignettes in the pair's sequence when it stopped (or so far). */
  n: number;
  /** The anytime-valid interval of mean(a − b) over the manifest, at level 1 − alpha/pairs. */
  interval: [number, number];
  /** Whether the pair still takes vignettes. */
  open: boolean;
}

/** What the decision over a run says (the contract's `decide`): per pair and per model. */
export interface DecisionReport {
  run_id: string;
  /** The run was posed until decided: the calls are those it made, not those a run stopping there would have made. */
  posed_until_decided: boolean;
  scorer: string;
  seed: number;
  batch: number;
  alpha: number;
  /** alpha over the pairs (Bonferroni): each pair's sequence is at level 1 − alpha_per_pair. */
  alpha_per_pair: number;
  margin: number;
  vignettes: number;
  epochs: number;
  pairs: PairDecision[];
  /** Per model: the vignettes it would have been posed (until its last pair stopped) and what it saves. */
  models: { model: string; vignettes: number; calls: number; calls_saved: number; usd_saved: number }[];
  calls: number;
  calls_full: number;
  usd_saved: number;
  /** The budget of the sweep's calls (null: none), and whether it stopped the run: the next batch did not fit. */
  max_calls: number | null;
  budget_spent: boolean;
}

/**
 * Whether the next batch (`size` vignettes to each of `contention` models, `epochs` times) fits a
 * budget of calls beside the `posed` calls before it. The live loop and the replay ask the same,
 * so a run stopped by its budget is replayed to the same stop.
 */
export function batchFits(maxCalls: number | undefined, posed: number, contention: number, size: number, epochs: number): boolean {
  return maxCalls === undefined || posed + contention * size * epochs <= maxCalls;
}

/** One vignette of the order: each model's epoch-reduced score (in [0, 1]); a model absent has not answered. */
export type OrderRow = ReadonlyMap<string, number>;

export class AdaptiveDecision {
  private readonly pairs: { a: string; b: string; cs: BettingConfidenceSequence; decision: PairDecision }[] = [];
  readonly alphaPerPair: number;

  constructor(private readonly opts: AdaptiveOptions) {
    if (!(opts.margin >= 0 && opts.margin < 1)) throw new RangeError(`margin must be in [0, 1), got ${opts.margin}`);
    const names = opts.models;
    const m = (names.length * (names.length - 1)) / 2;
    if (m < 1) throw new RangeError('an adaptive run compares at least two models');
    this.alphaPerPair = opts.alpha / m;
    for (let i = 0; i < names.length; i++) {
      for (let j = i + 1; j < names.length; j++) {
        const cs = new BettingConfidenceSequence({ population: opts.population, alpha: this.alphaPerPair, ...(opts.grid ? { grid: opts.grid } : {}) });
        this.pairs.push({ a: names[i]!, b: names[j]!, cs, decision: { a: names[i]!, b: names[j]!, status: 'undecided', winner: null, n: 0, interval: [-1, 1], open: true } });
      }
    }
  }

  /**
   * Feeds one batch of the order and decides which pairs stop. A model in contention absent from
   * every row of the batch (every answer given up on or unscorable, or its job failed for good)
   * leaves contention: its open pairs end undecided, and the others are not posed on for its sake.
   * The rule reads only the rows, so a live run, its resume and `decide` apply it at the same batch
   * (a job's failure, which a live run learns only when the job ends, plays no part).
   */
  addBatch(rows: readonly OrderRow[]): void {
    const silent = rows.length === 0 ? [] : this.inContention().filter((m) => !rows.some((row) => row.has(m)));
    for (const row of rows) {
      for (const p of this.pairs) {
        if (!p.decision.open) continue;
        const a = row.get(p.a);
        const b = row.get(p.b);
        if (a === undefined || b === undefined) continue;
        p.cs.push(a - b);
      }
    }
    for (const p of this.pairs) {
      if (!p.decision.open) continue;
      const [lo, hi] = p.cs.interval();
      p.decision.n = p.cs.n;
      p.decision.interval = [lo, hi];
      if (lo > 0 || hi < 0) {
        p.decision.status = 'decided';
        p.decision.winner = lo > 0 ? p.a : p.b;
        p.decision.open = false;
      } else if (this.opts.margin > 0 && lo >= -this.opts.margin && hi <= this.opts.margin) {
        p.decision.status = 'equivalent';
        p.decision.open = false;
      } else if (p.cs.n >= this.opts.population) {
        p.decision.open = false;
      }
    }
    for (const model of silent) {
      for (const p of this.pairs) if (p.a === model || p.b === model) p.decision.open = false;
    }
  }

  /** Closes every open pair (the budget or the manifest is spent): they end undecided. */
  close(): void {
    for (const p of this.pairs) p.decision.open = false;
  }

  /** Models with at least one open pair, in the run's order. */
  inContention(): string[] {
    return this.opts.models.filter((m) => this.pairs.some((p) => p.decision.open && (p.a === m || p.b === m)));
  }

  done(): boolean {
    return this.pairs.every((p) => !p.decision.open);
  }

  decisions(): PairDecision[] {
    return this.pairs.map((p) => ({ ...p.decision, interval: [...p.decision.interval] as [number, number] }));
  }
}

/**
 * The run's seeded order: a permutation of 0..n − 1 by Fisher–Yates over a 32-bit generator
 * (mulberry32) seeded by `seed`, fixed before any answer is seen.
 */
export function seededOrder(n: number, seed: number): Int32Array {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 2 ** 32;
  };
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    const t = order[i]!;
    order[i] = order[j]!;
    order[j] = t;
  }
  return order;
}
