/**
 * Which vignettes flipped between two runs of one manifest, for one pass/fail scorer: each run's
 * vignette x model matrix is read a page at a time (the score store's own pages, a turn of the
 * event loop between them), each (vignette, model) reduced to its epochs' majority verdict, and
 * the verdicts paired by vignette id. Only run A's verdicts are held (one boolean per vignette and
 * model); run B's are compared as its pages come.
 * Runs on: Node (core).
 */
import { PanoptesError, type Run } from '../domain.js';
import type { ScoreMatrixCell, ScoreMatrixPage } from '../scoring/score-matrix.js';
import type { FlippedVignettes, ModelFlips } from './contract-flips.js';

/** A page of a run's matrix of the scorer in manifest order, from `cursor` (a page of 1,000 keeps the calls few). */
export type MatrixPages = (run: Run, cursor: number) => Promise<ScoreMatrixPage>;

/** The epochs' majority: pass when more than half of the scored epochs passed; null with none scored. */
function verdictOf(cell: ScoreMatrixCell): boolean | null {
  return cell.scored === 0 || cell.passed === null ? null : cell.passed * 2 > cell.scored;
}

function verdictIn(cells: readonly ScoreMatrixCell[], model: string): boolean | null {
  const cell = cells.find((c) => c.model === model);
  return cell ? verdictOf(cell) : null;
}

async function* pagesOf(pages: MatrixPages, run: Run): AsyncGenerator<ScoreMatrixPage> {
  for (let cursor: number | null = 0; cursor !== null; ) {
    const page = await pages(run, cursor);
    if (page.kind !== 'pass_fail') {
      throw new PanoptesError('invalid_input', `scorer ${page.scorer} is graded: only a pass/fail scorer's verdicts flip`, { where: 'scorer' });
    }
    yield page;
    cursor = page.nextCursor;
  }
}

export async function flippedVignettes(pages: MatrixPages, a: Run, b: Run, limit: number): Promise<FlippedVignettes> {
  const models = a.models.filter((m) => b.models.includes(m));
  const before = new Map<string, Array<boolean | null>>();
  let scorer = '';
  for await (const page of pagesOf(pages, a)) {
    scorer = page.scorer;
    for (const row of page.rows) before.set(row.vignetteId, models.map((m) => verdictIn(row.cells, m)));
  }
  const flips: ModelFlips[] = models.map((model) => ({ model, compared: 0, passToFailCount: 0, failToPassCount: 0, passToFail: [], failToPass: [] }));
  for await (const page of pagesOf(pages, b)) {
    for (const row of page.rows) {
      const was = before.get(row.vignetteId);
      if (!was) continue;
      models.forEach((model, i) => {
        const now = verdictIn(row.cells, model);
        const then = was[i] ?? null;
        if (now === null || then === null) return;
        const f = flips[i]!;
        f.compared += 1;
        if (then && !now) {
          f.passToFailCount += 1;
          if (f.passToFail.length < limit) f.passToFail.push(row.vignetteId);
        } else if (!then && now) {
          f.failToPassCount += 1;
          if (f.failToPass.length < limit) f.failToPass.push(row.vignetteId);
        }
      });
    }
  }
  return { runA: a.id, runB: b.id, scorer, models: flips };
}
