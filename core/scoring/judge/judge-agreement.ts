/**
 * How far a scorer's judges agree: Krippendorff's alpha over the scored responses, each response
 * (model, vignette, epoch) a unit holding one value per judge. Fed cell by cell as a report reads
 * them, in any order; nominal for pass/fail verdicts, interval for graded ones. Null with fewer
 * than two judges, or when no response has two verdicts, or when every verdict is the same.
 *
 * Memory: per model one Float32Array of vignettes × epochs × MAX_JUDGES slots (NaN where a judge
 * gave no verdict), 32 bytes a response, growing by doubling. Values are in [0, 1] and mostly 0,
 * 0.5 or 1, which float32 holds exactly.
 * Runs on: Node (core).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { krippendorffAlpha } from '../statistics.js';
import type { ScorerKind } from '../../domain.js';

/** The most judges a definition may name (its schema's cap). */
export const MAX_JUDGES = 8;
/** The longest the alpha's pass keeps the event loop before giving it a turn. */
const SLICE_MS = 10;

export interface JudgeAgreementReport {
  /** Krippendorff's alpha across the judges; null when it cannot be computed (see above). */
  alpha: number | null;
  /** The judges, in the order their first verdict came. */
  judges: string[];
}

export class JudgeAgreement {
  private readonly judgeIndex = new Map<string, number>();
  private readonly values = new Map<string, Float32Array>();

  constructor(private readonly epochs: number) {}

  /** Whether any cell named a judge. */
  get seen(): boolean {
    return this.judgeIndex.size > 0;
  }

  /** One judge's value on one response (vi: the vignette's dense index in the report). */
  add(model: string, vi: number, epoch: number, judge: string, value: number): void {
    let j = this.judgeIndex.get(judge);
    if (j === undefined) {
      if (this.judgeIndex.size >= MAX_JUDGES) throw new RangeError(`more than ${MAX_JUDGES} judges in one scorer's cells (at "${judge}")`);
      j = this.judgeIndex.size;
      this.judgeIndex.set(judge, j);
    }
    const at = (vi * this.epochs + epoch - 1) * MAX_JUDGES + j;
    let slots = this.values.get(model);
    if (!slots || at >= slots.length) {
      let size = slots?.length ?? 1024 * this.epochs * MAX_JUDGES;
      while (size <= at) size *= 2;
      const grown = new Float32Array(size).fill(NaN);
      if (slots) grown.set(slots);
      slots = grown;
      this.values.set(model, slots);
    }
    slots[at] = value;
  }

  /** Alpha over every response with two or more verdicts, handing the event loop back as it goes. */
  async report(kind: ScorerKind): Promise<JudgeAgreementReport> {
    const judges = [...this.judgeIndex.keys()];
    if (judges.length < 2) return { alpha: null, judges };
    const units: number[][] = [];
    let since = performance.now();
    for (const slots of this.values.values()) {
      for (let base = 0; base < slots.length; base += MAX_JUDGES) {
        let unit: number[] | undefined;
        for (let j = 0; j < judges.length; j++) {
          const v = slots[base + j]!;
          if (!Number.isNaN(v)) (unit ??= []).push(v);
        }
        if (unit && unit.length >= 2) units.push(unit);
        if ((base & 0xffff) === 0 && performance.now() - since >= SLICE_MS) {
          await nextTurn();
          since = performance.now();
        }
      }
    }
    return { alpha: krippendorffAlpha(units, kind === 'pass_fail' ? 'nominal' : 'interval'), judges };
  }
}
