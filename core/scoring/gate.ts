/**
 * The gate of a change: a base run against a head run of the same manifest and models, paired by
 * (vignette id, model), one verdict per scorer and model — in runs of prompt variants, per scorer,
 * model and variant (each arm of the comparison) — from the report's own paired comparison
 * (`buildRunComparison`: diff = head − base with its 95 % interval), and one decision for CI —
 * `pass` (exit 0: no scorer of any model is significantly worse by more than the margin), `worse`
 * (exit 1), or `incomparable` (exit 2, with the reasons). Pure: the service gathers the
 * comparisons and the per-vignette verdicts (run-gate.ts) and hands them here.
 * Runs on: Node (core); pure; types shared with the renderer.
 */
import { MIN_VIGNETTES_TO_COMPARE, type RunComparison } from './report-shape.js';
import type { ScorerKind } from '../domain.js';

/** One scorer of one model (under one prompt variant, in runs of variants), base against head. */
export interface GateLine {
  scorer: string;
  model: string;
  /** The prompt variant this line compares, in runs of two or more variants; null otherwise. */
  variant: string | null;
  kind: ScorerKind;
  /** Vignettes both runs scored for this model. */
  n: number;
  base_mean: number | null;
  head_mean: number | null;
  /** Mean of head − base over the paired vignettes. */
  diff: number;
  ci95: [number, number] | null;
  /**
   * `worse`: the whole interval lies below −margin; `better`: it lies above 0; `unchanged`: neither
   * (the data do not show a change beyond the margin); `too_few`: no interval (fewer than two pairs).
   */
  verdict: 'worse' | 'better' | 'unchanged' | 'too_few';
  /** Pass/fail scorers: vignettes that passed in the base and fail in the head (most epochs), the first 50. */
  pass_to_fail: string[];
  /** How many went from pass to fail (all of them, not only those listed). */
  pass_to_fail_count: number;
  /** The scorer's definition changed between the runs (its version differs): the two measure differently. */
  scorer_changed: boolean;
}

export interface GateResult {
  base: string;
  head: string;
  margin: number;
  decision: 'pass' | 'worse' | 'incomparable';
  /** Why the runs cannot be compared (decision `incomparable`); empty otherwise. */
  reasons: string[];
  /** Models both runs ran, in the base run's order. */
  models: string[];
  /** Models only one run has: not compared. */
  models_only_base: string[];
  models_only_head: string[];
  vignettes: number;
  lines: GateLine[];
}

/** How many pass→fail vignette ids a line lists. */
export const PASS_TO_FAIL_LISTED = 50;

/** Per-vignette verdicts of one scorer on one run: model (or arm, `model · variant`) → vignette id → passed (most epochs). */
export type PassMap = Map<string, Map<string, boolean>>;

/** What the gate decides from, for one scorer both runs have. */
export interface GateScorerInput {
  comparison: RunComparison;
  kind: ScorerKind;
  /** Pass/fail scorers only. */
  basePasses?: PassMap;
  headPasses?: PassMap;
}

/**
 * The verdict of one interval of head − base against the margin. `constant`: every paired
 * difference is the same (`diff`), so the report gives no interval rather than a point (identical
 * runs differ by exactly 0 everywhere): the difference itself is then judged.
 */
export function gateVerdict(ci95: [number, number] | null, margin: number, constant?: { diff: number }): GateLine['verdict'] {
  if (ci95 === null && constant) return constant.diff < -margin ? 'worse' : constant.diff > 0 ? 'better' : 'unchanged';
  if (ci95 === null) return 'too_few';
  if (ci95[1] < -margin) return 'worse';
  if (ci95[0] > 0) return 'better';
  return 'unchanged';
}

/** What the gate compares of one model: the model itself, or an arm of it (the model under one prompt variant), by its row name. */
interface GateUnit {
  name: string;
  variant: string | null;
}

/**
 * The units of `model` a comparison compares, each with its pair (head against base); the units it
 * has rows for but no pair; the plain model is a unit unless the comparison is by arm and has no
 * pair for it (a run of variants whose every vignette names one has no plain row).
 */
function unitsOf(c: RunComparison, model: string): { paired: Array<GateUnit & { pair: RunComparison['pairs'][number] }>; unpaired: GateUnit[] } {
  const arms = new Map<string, string>();
  for (const row of [...c.models_a, ...c.models_b]) if (row.arm?.model === model) arms.set(row.model, row.arm.variant);
  const candidates: GateUnit[] = [{ name: model, variant: null }, ...[...arms].map(([name, variant]) => ({ name, variant }))];
  const paired: Array<GateUnit & { pair: RunComparison['pairs'][number] }> = [];
  const unpaired: GateUnit[] = [];
  for (const u of candidates) {
    const pair = c.pairs.find((p) => p.a === `${c.run_b}:${u.name}`);
    if (pair) paired.push({ ...u, pair });
    else if (u.variant !== null || arms.size === 0) unpaired.push(u);
  }
  return { paired, unpaired };
}

function passToFail(base: Map<string, boolean> | undefined, head: Map<string, boolean> | undefined): string[] {
  const out: string[] = [];
  if (!base || !head) return out;
  for (const [id, passed] of base) if (passed && head.get(id) === false) out.push(id);
  return out;
}

/** The gate's result from the scorers' comparisons; `reasons` non-empty makes it `incomparable`. */
export function decideGate(
  runs: { base: string; head: string; models: string[]; modelsOnlyBase: string[]; modelsOnlyHead: string[]; vignettes: number },
  scorers: readonly GateScorerInput[],
  margin: number,
  reasons: string[],
): GateResult {
  const lines: GateLine[] = [];
  for (const s of scorers) {
    const c = s.comparison;
    for (const model of runs.models) {
      const { paired, unpaired } = unitsOf(c, model);
      // A model (or arm) the comparison has no pair for (unscored in one run, or a variant only one
      // run has) is never passed unseen: a gate that compared nothing must not say pass.
      for (const u of unpaired) reasons.push(`${c.scorer}: no comparison of ${u.name} between the runs (unscored in one of them${u.variant === null ? '' : ', or the variant is only in one'})`);
      for (const { name, variant, pair } of paired) {
        const dropped = s.kind === 'pass_fail' ? passToFail(s.basePasses?.get(name), s.headPasses?.get(name)) : [];
        lines.push({
          scorer: c.scorer,
          model,
          variant,
          kind: s.kind,
          n: pair.n,
          base_mean: c.models_a.find((m) => m.model === name)?.mean ?? null,
          head_mean: c.models_b.find((m) => m.model === name)?.mean ?? null,
          diff: pair.diff,
          ci95: pair.ci95,
          verdict: gateVerdict(pair.ci95, margin, pair.stderr === 0 && pair.n >= MIN_VIGNETTES_TO_COMPARE ? { diff: pair.diff } : undefined),
          pass_to_fail: dropped.slice(0, PASS_TO_FAIL_LISTED),
          pass_to_fail_count: dropped.length,
          scorer_changed: c.scorer_version_a !== c.scorer_version_b,
        });
      }
    }
  }
  const decision = reasons.length > 0 ? 'incomparable' : lines.some((l) => l.verdict === 'worse') ? 'worse' : 'pass';
  return {
    base: runs.base,
    head: runs.head,
    margin,
    decision,
    reasons,
    models: runs.models,
    models_only_base: runs.modelsOnlyBase,
    models_only_head: runs.modelsOnlyHead,
    vignettes: runs.vignettes,
    lines: reasons.length > 0 ? [] : lines,
  };
}

/** The exit status a gate result maps to: 0 pass, 1 worse, 2 incomparable. */
export function gateExitCode(result: GateResult): 0 | 1 | 2 {
  return result.decision === 'pass' ? 0 : result.decision === 'worse' ? 1 : 2;
}
