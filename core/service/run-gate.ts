/**
 * Gathers what the gate decides from, through the contract's own reads: both runs, the scorers
 * both have (and whether any still has records to score), the report's comparison of the two runs
 * per scorer, and each run's per-vignette verdicts (the score matrix, a page at a time) for the
 * pass → fail list and the check that the runs share their vignettes. The decision itself is
 * core/scoring/gate.ts.
 * Runs on: Node (core).
 */
import { decideGate, type GateResult, type GateScorerInput, type PassMap } from '../scoring/gate.js';
import { armName, variantOf } from '../scoring/variant-arms.js';
import type { ControlApi, ScorerStatus } from './contract.js';
import type { ValidInput } from './contract-dispatcher.js';

type GateReads = Pick<ControlApi, 'getRun' | 'scoringStatus' | 'compareRuns' | 'scoreMatrix'>;

/** Vignette ids listed in a reason before "…". */
const IDS_LISTED = 5;

function listed(ids: readonly string[]): string {
  return ids.slice(0, IDS_LISTED).join(', ') + (ids.length > IDS_LISTED ? `, … (${ids.length} in all)` : '');
}

/**
 * One run's vignette ids in manifest order and, per model, whether each passed on most epochs; in a
 * run of two or more prompt variants, per arm (`model · variant`) for the vignettes naming one, as
 * the comparison's rows are.
 */
async function readVerdicts(api: GateReads, runId: string, scorer: string): Promise<{ ids: string[]; passes: PassMap }> {
  const ids: string[] = [];
  const byModel: PassMap = new Map();
  const byArm: PassMap = new Map();
  const variants = new Set<string>();
  const put = (passes: PassMap, unit: string, id: string, passed: boolean) => {
    let m = passes.get(unit);
    if (!m) passes.set(unit, (m = new Map()));
    m.set(id, passed);
  };
  for (let cursor: number | null = 0; cursor !== null; ) {
    const page = await api.scoreMatrix({ runId, scorer, sort: 'vignette', limit: 1000, cursor });
    for (const row of page.rows) {
      ids.push(row.vignetteId);
      const variant = variantOf(row.metadata);
      if (variant !== null) variants.add(variant);
      for (const c of row.cells) {
        // A tie of an even number of epochs is neither a pass nor a fail: it is left out.
        if (c.passed === null || c.scored === 0 || c.passed * 2 === c.scored) continue;
        const passed = c.passed * 2 > c.scored;
        put(byModel, c.model, row.vignetteId, passed);
        put(byArm, variant === null ? c.model : armName(c.model, variant), row.vignetteId, passed);
      }
    }
    cursor = page.nextCursor;
  }
  return { ids, passes: variants.size >= 2 ? byArm : byModel };
}

/** The newest version of each scorer name attached to a run. */
function byName(scorers: readonly ScorerStatus[]): Map<string, ScorerStatus> {
  const out = new Map<string, ScorerStatus>();
  for (const s of scorers) out.set(s.name, s);
  return out;
}

function vignetteReasons(baseIds: readonly string[], headIds: readonly string[]): string[] {
  const head = new Set(headIds);
  const base = new Set(baseIds);
  const onlyBase = baseIds.filter((id) => !head.has(id));
  const onlyHead = headIds.filter((id) => !base.has(id));
  if (onlyBase.length === baseIds.length) return ['no common vignettes: the runs share no vignette id (different manifests)'];
  const out: string[] = [];
  if (onlyBase.length > 0) out.push(`different manifests: ${onlyBase.length} vignettes only in base (${listed(onlyBase)})`);
  if (onlyHead.length > 0) out.push(`different manifests: ${onlyHead.length} vignettes only in head (${listed(onlyHead)})`);
  return out;
}

/** The gate of `head` against `base`: every reason the runs cannot be compared, or each scorer × model verdict. */
export async function gateRuns(api: GateReads, input: ValidInput<'gate'>): Promise<GateResult> {
  const base = (await api.getRun({ runId: input.base })).run;
  const head = (await api.getRun({ runId: input.head })).run;
  const margin = input.margin ?? 0;
  const reasons: string[] = [];
  const models = base.models.filter((m) => head.models.includes(m));
  const runs = {
    base: base.id,
    head: head.id,
    models,
    modelsOnlyBase: base.models.filter((m) => !head.models.includes(m)),
    modelsOnlyHead: head.models.filter((m) => !base.models.includes(m)),
    vignettes: 0,
  };
  for (const [side, r] of [['base', base], ['head', head]] as const) {
    if (r.status === 'queued' || r.status === 'running') reasons.push(`${side} run ${r.id} is ${r.status}: gate it once it has finished`);
    // Its vignettes were chosen by its answers, and a fixed-n interval over them is not valid.
    if (r.options.untilDecided) reasons.push(`${side} run ${r.id} was posed until decided: it stopped where its data said, so a fixed-n comparison of it is not valid; gate full sweeps (see panoptes decide for its decision)`);
  }
  if (models.length === 0) reasons.push(`no common models: base ran ${base.models.join(', ')}, head ran ${head.models.join(', ')}`);

  const baseScorers = byName((await api.scoringStatus({ runId: base.id })).scorers);
  const headScorers = byName((await api.scoringStatus({ runId: head.id })).scorers);
  let names = [...baseScorers.keys()].filter((n) => headScorers.has(n));
  if (input.scorers !== undefined) {
    for (const n of input.scorers) {
      if (!baseScorers.has(n) || !headScorers.has(n)) reasons.push(`scorer "${n}" is not attached to ${baseScorers.has(n) ? 'head' : 'base'} (score it first: panoptes score RUN --scorers FILE)`);
    }
    names = names.filter((n) => input.scorers!.includes(n));
  }
  if (names.length === 0 && reasons.length === 0) {
    const list = (m: Map<string, ScorerStatus>) => (m.size === 0 ? 'none' : [...m.keys()].join(', '));
    reasons.push(`no common scorers: base has ${list(baseScorers)}, head has ${list(headScorers)} (score both runs with the same scoring file)`);
  }
  for (const n of names) {
    const b = baseScorers.get(n)!;
    const h = headScorers.get(n)!;
    if (b.kind !== h.kind) reasons.push(`scorer "${n}" is ${b.kind} in base and ${h.kind} in head`);
    for (const [side, s, id] of [['base', b, base.id], ['head', h, head.id]] as const) {
      if (s.pending > 0) reasons.push(`scorer "${n}" still has ${s.pending} records of ${side} run ${id} to score (wait for scoring to finish)`);
    }
  }
  if (reasons.length > 0) return decideGate(runs, [], margin, reasons);

  const inputs: GateScorerInput[] = [];
  for (const [i, n] of names.entries()) {
    const kind = baseScorers.get(n)!.kind;
    const needVerdicts = i === 0 || kind === 'pass_fail';
    const b = needVerdicts ? await readVerdicts(api, base.id, n) : null;
    const h = needVerdicts ? await readVerdicts(api, head.id, n) : null;
    if (i === 0) {
      reasons.push(...vignetteReasons(b!.ids, h!.ids));
      runs.vignettes = b!.ids.length;
      if (reasons.length > 0) return decideGate(runs, [], margin, reasons);
    }
    const comparison = await api.compareRuns({ runA: base.id, runB: head.id, scorer: n, ...(input.reducer ? { reducer: input.reducer } : {}) });
    inputs.push({ comparison, kind, ...(kind === 'pass_fail' ? { basePasses: b!.passes, headPasses: h!.passes } : {}) });
  }
  return decideGate(runs, inputs, margin, reasons);
}
