/**
 * Where a run posed until decided reads a batch's scores: the scorekeeper first scores every
 * record landed so far, then each vignette of the batch is read from the score matrix (the one the
 * report and `decide` read), each model's epochs reduced as `decide` reduces them. So the live loop
 * and `panoptes decide` over the stored run see the same numbers.
 * Runs on: Node (core).
 */
import type { AdaptiveRows } from '../scheduler/adaptive-run.js';
import type { OrderRow } from '../scoring/adaptive-decision.js';
import type { Scorekeeper } from '../scoring/scorekeeper.js';
import type { ControlApi } from './contract.js';
import { completeRow } from './run-decide.js';

export function adaptiveRows(worker: Pick<Scorekeeper, 'scoreLanded'>, api: () => Pick<ControlApi, 'scoreMatrix'>): AdaptiveRows {
  return {
    async rows(run, scorer, indices, signal) {
      await worker.scoreLanded(run.id, signal);
      const rows: OrderRow[] = [];
      for (const idx of indices) {
        const page = await api().scoreMatrix({ runId: run.id, ...(scorer === undefined ? {} : { scorer }), sort: 'vignette', cursor: idx, limit: 1 });
        rows.push(completeRow(page.rows[0]?.cells ?? [], page.epochs));
      }
      return rows;
    },
  };
}
