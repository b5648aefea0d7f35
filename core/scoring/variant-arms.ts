/**
 * Prompt variants as an axis of the report: a run whose vignettes name two or more variants
 * (metadata `variant`) is reported by arm — a model under one variant — and its arms are paired by
 * the underlying item (metadata `item`, else the vignette's own id), so that "prompt A vs prompt B"
 * gets the very paired test, Holm and verdict of "model A vs model B". Nothing here computes a
 * statistic: the cells are renamed on their way into `buildScoreReport` / `buildRunComparison`
 * (model → the arm `<model> · <variant>`, vignette id → item) and the finished report gets each
 * row's arm and the vignette ids back. A run with fewer than two variants is reported as before.
 * Runs on: Node (core).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ScoreCell } from './report-cells.js';
import type { ModelScore, RunComparison, ScoreReport } from './report-shape.js';

/** One vignette that names a variant, as the store reads it. */
export interface VignetteVariantRow {
  vignetteId: string;
  variant: string;
  item: string | null;
}

/** Between a model and its variant in an arm's name. */
export const ARM_SEPARATOR = ' · ';

export function armName(model: string, variant: string): string {
  return `${model}${ARM_SEPARATOR}${variant}`;
}

/** The prompt variant a vignette's metadata names, as the store reads it (text, or a number as text); null: none. */
export function variantOf(metadata: Readonly<Record<string, unknown>> | undefined): string | null {
  const v = metadata?.variant;
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) ? String(v) : null;
}

/** The key of (variant, item): the separator cannot occur in either, both being JSON text. */
function slot(variant: string, item: string): string {
  return `${variant}\u0000${item}`;
}

export class VariantArms {
  /** The variants in manifest order. */
  readonly variants: string[] = [];
  private readonly byVignette = new Map<string, { variant: string; item: string }>();
  private readonly vignetteOf = new Map<string, string>();
  private readonly arms = new Map<string, { model: string; variant: string }>();
  /** Vignettes that repeat the (variant, item) of an earlier one: left unpaired, and said so. */
  private readonly repeats: string[] = [];

  /**
   * The arms of a run from its vignettes that name a variant, or null when fewer than two
   * variants are named (the run is then reported by model, as a run without variants).
   */
  static async read(pages: Iterable<readonly VignetteVariantRow[]>): Promise<VariantArms | null> {
    const arms = new VariantArms();
    const seen = new Set<string>();
    for (const page of pages) {
      for (const row of page) arms.add(row, seen);
      await nextTurn();
    }
    return arms.variants.length >= 2 ? arms : null;
  }

  private add(row: VignetteVariantRow, seen: Set<string>): void {
    if (!seen.has(row.variant)) {
      seen.add(row.variant);
      this.variants.push(row.variant);
    }
    let item = row.item ?? row.vignetteId;
    const key = slot(row.variant, item);
    if (this.vignetteOf.has(key)) {
      this.repeats.push(`vignette ${row.vignetteId} repeats item "${item}" of variant "${row.variant}" (as ${this.vignetteOf.get(key)!}): it is left unpaired, under its own id.`);
      item = row.vignetteId;
    }
    this.vignetteOf.set(slot(row.variant, item), row.vignetteId);
    this.byVignette.set(row.vignetteId, { variant: row.variant, item });
  }

  /** The leaderboard's order: each model, then its arms in the variants' order. */
  order(models: readonly string[]): string[] {
    return models.flatMap((m) => [m, ...this.variants.map((v) => armName(m, v))]);
  }

  /** A cell renamed into its arm and item; a vignette naming no variant keeps its model and id. */
  cell(c: ScoreCell): ScoreCell {
    const at = this.byVignette.get(c.vignetteId);
    if (at === undefined) return c;
    const name = armName(c.model, at.variant);
    if (!this.arms.has(name)) this.arms.set(name, { model: c.model, variant: at.variant });
    return { ...c, model: name, vignetteId: at.item };
  }

  async *cells(pages: AsyncIterable<readonly ScoreCell[]>): AsyncGenerator<ScoreCell[]> {
    for await (const page of pages) yield page.map((c) => this.cell(c));
  }

  /** The finished report with each arm named and its unstable items back as vignette ids. */
  report(r: ScoreReport): ScoreReport {
    const out: ScoreReport = { ...r, models: r.models.map((m) => this.row(m)), variants: [...this.variants], warnings: [...this.repeats, ...r.warnings] };
    if (r.slices) out.slices = r.slices.map((s) => ({ ...s, models: s.models.map((m) => this.row(m)) }));
    return out;
  }

  /** A comparison's rows named by arm, each run's by its own arms (null: that run has no variants). */
  static comparison(c: RunComparison, a: VariantArms | null, b: VariantArms | null): RunComparison {
    if (a === null && b === null) return c;
    const variants = [...(a?.variants ?? [])];
    for (const v of b?.variants ?? []) if (!variants.includes(v)) variants.push(v);
    return {
      ...c,
      models_a: a === null ? c.models_a : c.models_a.map((m) => a.row(m)),
      models_b: b === null ? c.models_b : c.models_b.map((m) => b.row(m)),
      variants,
    };
  }

  private row(m: ModelScore): ModelScore {
    const arm = this.arms.get(m.model);
    if (arm === undefined) return m;
    return { ...m, arm: { ...arm }, unstable: m.unstable.map((item) => this.vignetteOf.get(slot(arm.variant, item)) ?? item) };
  }
}
