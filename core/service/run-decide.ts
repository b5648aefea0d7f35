/**
 * The anytime-valid decision over a stored run: its vignettes taken in a seeded random order (fixed
 * by the seed, not by the answers), a batch at a time, every pair of models' betting confidence
 * sequence updated after each batch, and each pair stopped when decided, equivalent or out of
 * vignettes (core/scoring/adaptive-decision.ts). It is a deterministic function of the stored scores
 * and the seed: asked twice, or after a crash, it answers the same. It says, per pair, the decision,
 * at which n, and the calls and dollars a run stopping there would have saved against the full sweep.
 * Runs on: Node (core).
 */
import { AdaptiveDecision, batchFits, seededOrder, type DecisionReport, type OrderRow } from '../scoring/adaptive-decision.js';
import { Turns } from '../scoring/report-cells.js';
import type { ScoreMatrixCell } from '../scoring/score-matrix.js';
import type { Run } from '../domain.js';
import type { ScoreReport } from '../scoring/report-shape.js';
import type { ControlApi } from './contract.js';
import type { ValidInput } from './contract-dispatcher.js';

type DecideReads = Pick<ControlApi, 'getRun' | 'scoreMatrix' | 'stats'>;

/** A vignette's epoch-reduced score per model. Only complete cells (every epoch scored) enter a sequence: a partial one would weigh its epochs differently. */
export function completeRow(cells: readonly ScoreMatrixCell[], epochs: number): Map<string, number> {
  const values = new Map<string, number>();
  for (const c of cells) if (c.reduced !== null && c.scored === epochs) values.set(c.model, c.reduced);
  return values;
}

/** Each vignette's epoch-reduced score per model, in manifest order (the score matrix, a page at a time). */
async function reducedRows(api: DecideReads, runId: string, scorer: string | undefined): Promise<{ scorer: string; rows: Map<string, number>[] }> {
  const rows: Map<string, number>[] = [];
  let name = scorer ?? '';
  for (let cursor: number | null = 0; cursor !== null; ) {
    const page = await api.scoreMatrix({ runId, ...(scorer ? { scorer } : {}), sort: 'vignette', limit: 1000, cursor });
    name = page.scorer;
    for (const row of page.rows) rows.push(completeRow(row.cells, page.epochs));
    cursor = page.nextCursor;
  }
  return { scorer: name, rows };
}

export async function decideRun(api: DecideReads, input: ValidInput<'decide'>): Promise<DecisionReport> {
  const { run } = await api.getRun({ runId: input.runId });
  // A run posed until decided is replayed with its own settings unless told otherwise: the same decision it made.
  const posed = run.options.untilDecided;
  const { scorer, rows } = await reducedRows(api, run.id, input.scorer ?? posed?.scorer);
  const seed = input.seed ?? posed?.orderSeed ?? 1;
  const batch = input.batch ?? posed?.batch ?? 10;
  const alpha = input.alpha ?? posed?.alpha ?? 0.05;
  const margin = input.margin ?? posed?.margin ?? 0;
  const maxCalls = input.maxCalls ?? posed?.maxCalls;
  const order = seededOrder(rows.length, seed);
  const decision = new AdaptiveDecision({ models: run.models, population: rows.length, alpha, margin });
  const posedTo = new Map(run.models.map((m) => [m, 0]));
  // A push costs up to one grid pass per open pair: the loop hands the event loop back every ~10 ms.
  const turns = new Turns();
  const pairs = (run.models.length * (run.models.length - 1)) / 2;
  let budgetSpent = false;
  for (let lo = 0; lo < order.length && !decision.done(); lo += batch) {
    if (turns.due(batch * pairs * 8)) await turns.take();
    const posedCalls = [...posedTo.values()].reduce((s, n) => s + n, 0) * run.epochs;
    if (!batchFits(maxCalls, posedCalls, decision.inContention().length, Math.min(batch, order.length - lo), run.epochs)) {
      budgetSpent = true;
      break;
    }
    const inBatch: OrderRow[] = [];
    for (let i = lo; i < Math.min(order.length, lo + batch); i++) inBatch.push(rows[order[i]!]!);
    for (const m of decision.inContention()) posedTo.set(m, posedTo.get(m)! + inBatch.length);
    decision.addBatch(inBatch);
  }
  decision.close();
  const usage = (await api.stats({ runId: run.id })).models;
  const models = run.models.map((model) => {
    const vignettes = posedTo.get(model)!;
    const calls = vignettes * run.epochs;
    const full = rows.length * run.epochs;
    const u = usage.find((x) => x.model === model);
    // What a call costs at the run's prices, cached or not: a sweep stopped early saves calls the cache would not have answered.
    const perCall = u && u.calls > 0 ? (u.estCostUsd + u.savedCostUsd) / u.calls : 0;
    return { model, vignettes, calls, calls_saved: full - calls, usd_saved: (full - calls) * perCall };
  });
  return {
    run_id: run.id,
    posed_until_decided: posed !== undefined,
    scorer,
    seed,
    batch,
    alpha,
    alpha_per_pair: decision.alphaPerPair,
    margin,
    vignettes: rows.length,
    epochs: run.epochs,
    pairs: decision.decisions(),
    models,
    calls: models.reduce((s, m) => s + m.calls, 0),
    calls_full: rows.length * run.epochs * run.models.length,
    usd_saved: models.reduce((s, m) => s + m.usd_saved, 0),
    max_calls: maxCalls ?? null,
    budget_spent: budgetSpent,
  };
}

/**
 * The report of a run posed until decided: its pairs are the anytime-valid decision's (its own
 * settings), and the fixed-n pair table is left out, since stopping when the data said so makes it
 * invalid. Any other run's report is returned as it is.
 */
export async function withDecision(api: DecideReads, run: Run, reportOf: (run: Run) => Promise<ScoreReport>): Promise<ScoreReport> {
  const report = await reportOf(run);
  if (!run.options.untilDecided) return report;
  const anytime = await decideRun(api, { runId: run.id });
  return { ...report, pairs: [], anytime };
}

