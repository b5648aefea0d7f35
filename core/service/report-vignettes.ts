/**
 * The vignette table of a shared HTML report: for the first `limit` vignettes of a run (manifest
 * order), each model's answer (its first epoch's) and the scorer's verdict on it (the matrix's
 * epoch-reduced value and how many epochs passed), read through the contract a page at a time so
 * a run of any size costs at most `limit` rows of memory and gives the event loop a turn per page.
 * Runs on: Node (core).
 */
import type { ReportVignetteRow, ReportVignettes } from '../scoring/html-report.js';
import type { ControlApi, EpochReducer } from './contract.js';

/** Vignettes the HTML report lists unless told otherwise: enough to browse, small enough for a page of a few MB. */
export const DEFAULT_REPORT_VIGNETTES = 2000;

/** Matrix rows read per call (the contract's page). */
const MATRIX_PAGE = 200;

/** Longest answer kept per cell: a report is for reading, not an export of every token. */
const ANSWER_CHARS = 2000;

export async function collectReportVignettes(
  api: Pick<ControlApi, 'scoreMatrix' | 'responses'>,
  input: { runId: string; scorer?: string | undefined; reducer?: EpochReducer | undefined; limit: number },
): Promise<ReportVignettes> {
  const rows: ReportVignetteRow[] = [];
  let models: string[] = [];
  let total = 0;
  for (let cursor: number | null = 0; cursor !== null && rows.length < input.limit; ) {
    const page = await api.scoreMatrix({
      runId: input.runId,
      cursor,
      limit: Math.min(MATRIX_PAGE, input.limit - rows.length),
      ...(input.scorer !== undefined ? { scorer: input.scorer } : {}),
      ...(input.reducer !== undefined ? { reducer: input.reducer } : {}),
    });
    models = page.models;
    total = page.total;
    for (const row of page.rows) {
      const answers = await firstAnswers(api, input.runId, row.vignetteId);
      rows.push({
        id: row.vignetteId,
        cells: row.cells.map((c) => ({ model: c.model, answer: answers.get(c.model) ?? null, value: c.reduced, passed: c.passed, scored: c.scored })),
      });
    }
    cursor = page.nextCursor;
  }
  return { models, rows, total };
}

/** Each model's epoch-1 answer to one vignette (one record per model). */
async function firstAnswers(api: Pick<ControlApi, 'responses'>, runId: string, vignetteId: string): Promise<Map<string, string>> {
  const answers = new Map<string, string>();
  for (let cursor: number | null = 0; cursor !== null; ) {
    const page = await api.responses({ runId, vignetteId, epoch: 1, limit: 1000, cursor });
    for (const r of page.items) {
      if (!answers.has(r.model)) answers.set(r.model, r.response.length > ANSWER_CHARS ? `${r.response.slice(0, ANSWER_CHARS)}…` : r.response);
    }
    cursor = page.nextCursor;
  }
  return answers;
}
