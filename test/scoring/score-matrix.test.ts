/**
 * The vignette × model matrix and the side-by-side detail through the contract, on a real engine
 * (real SQLite in a temp dir) with mock-strong against mock-weak over three epochs, scored by a
 * rule and by two mock judges. Every figure is checked against one computed here, independently,
 * from the raw score rows read with plain SQL: each epoch's value, the reduced value (mean and
 * max), the passes, the flip rate, the judges' disagreement; the orders by flip rate and by judge
 * disagreement, paged; and every response with every score and judge rationale. A larger stored
 * run (read in several ranges) is ordered by flip rate as the raw rows order it, at any depth.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ScoreMatrixPage, ScoreMatrixRow } from '../../core/service/contract.js';
import { openEngine, type Engine } from '../../core/service/engine.js';
import { writeStoredRun } from '../../bench/stored-run.js';
import { useScoredRun } from '../helpers/scored-run.js';
import { tempDir } from '../helpers/temp.js';

const VIGNETTES = 23;
const EPOCHS = 3;
const MODELS = ['mock-strong', 'mock-weak'];
const JUDGED = { name: 'judged', type: 'judge' as const, judges: ['mock-judge', 'mock-judge-2'], rubric: 'Is the answer the right option?' };

let engine: Engine;
let runId: string;
useScoredRun({ vignettes: VIGNETTES, epochs: EPOCHS, models: MODELS, scorers: { scorers: [{ name: 'exact', type: 'match' }, JUDGED] } }, (run) => ({ engine, runId } = run));

interface RawScore {
  vignette_id: string;
  idx: number;
  model: string;
  epoch: number;
  judge: number;
  value: number;
  passed: number | null;
  explanation: string | null;
  seq: number;
}

/** The scorer's rows, straight from the tables. */
function raw(scorer: string, run = runId, e = engine): RawScore[] {
  return e.store.db
    .prepare(
      `SELECT v.vignette_id, v.idx, j.model, j.epoch, sc.judge, sc.value, sc.passed, sc.explanation, sc.seq
       FROM scores sc JOIN scorers s ON s.id = sc.scorer_id JOIN responses r ON r.seq = sc.seq
         JOIN jobs j ON j.id = r.job_id JOIN vignettes v ON v.run_id = j.run_id AND v.idx = r.vignette_idx
       WHERE s.name = ? AND j.run_id = ? AND sc.failed = 0`,
    )
    .all(scorer, run) as RawScore[];
}

interface Expected {
  idx: number;
  epochs: (number | null)[];
  passed: number;
  flip: number | null;
  spread: number | null;
  mean: number;
  max: number;
}

/** Per "vignette|model", from the raw rows: nothing shared with the engine's code. */
function expected(scorer: string, rows: RawScore[] = raw(scorer), epochCount = EPOCHS): Map<string, Expected> {
  const byCell = new Map<string, RawScore[]>();
  for (const r of rows) {
    const key = `${r.vignette_id}|${r.model}`;
    byCell.set(key, [...(byCell.get(key) ?? []), r]);
  }
  const out = new Map<string, Expected>();
  for (const [key, rows] of byCell) {
    const epochs: (number | null)[] = [];
    let passed = 0;
    const spreads: number[] = [];
    for (let e = 1; e <= epochCount; e++) {
      const verdicts = rows.filter((r) => r.epoch === e);
      if (verdicts.length === 0) {
        epochs.push(null);
        continue;
      }
      const values = verdicts.map((r) => r.value);
      // Every scorer here is pass/fail: an epoch is 1 when more than half its verdicts pass (a 1-1 split fails), as in the report.
      const pass = verdicts.filter((r) => r.passed === 1).length > verdicts.length / 2;
      epochs.push(pass ? 1 : 0);
      if (pass) passed += 1;
      if (values.length > 1) spreads.push(Math.max(...values) - Math.min(...values));
    }
    const scored = epochs.filter((v): v is number => v !== null);
    const k = scored.length;
    out.set(key, {
      idx: rows[0]!.idx,
      epochs,
      passed,
      flip: k >= 2 ? (2 * passed * (k - passed)) / (k * (k - 1)) : null,
      spread: spreads.length === 0 ? null : spreads.reduce((a, b) => a + b, 0) / spreads.length,
      mean: scored.reduce((a, b) => a + b, 0) / k,
      max: Math.max(...scored),
    });
  }
  return out;
}

/** Every page, following nextCursor. */
async function allRows(input: { scorer: string; sort?: 'vignette' | 'flip_rate' | 'judge_disagreement'; reducer?: 'mean' | 'max' }, limit: number): Promise<ScoreMatrixRow[]> {
  const rows: ScoreMatrixRow[] = [];
  let cursor: number | null = 0;
  let pages = 0;
  while (cursor !== null) {
    const page: ScoreMatrixPage = await engine.service.scoreMatrix({ runId, ...input, limit, cursor });
    expect(page.total).toBe(VIGNETTES);
    expect(page.models).toEqual(MODELS);
    expect(page.rows.length).toBeLessThanOrEqual(limit);
    rows.push(...page.rows);
    cursor = page.nextCursor;
    pages += 1;
  }
  expect(pages).toBe(Math.ceil(VIGNETTES / limit));
  return rows;
}

/** The order the sort promises: largest key over the models first, manifest order among equals. */
function expectedOrder(exp: Map<string, Expected>, key: (e: Expected) => number | null): string[] {
  const best = new Map<string, { idx: number; key: number }>();
  for (const [cell, e] of exp) {
    const id = cell.split('|')[0]!;
    const k = key(e) ?? -1;
    const was = best.get(id);
    best.set(id, { idx: e.idx, key: Math.max(was?.key ?? -1, k) });
  }
  return [...best.entries()].sort(([, a], [, b]) => b.key - a.key || a.idx - b.idx).map(([id]) => id);
}

describe('the vignette x model matrix', () => {
  it('gives every cell the figures the raw score rows give, page by page in manifest order', async () => {
    const exp = expected('exact');
    const rows = await allRows({ scorer: 'exact' }, 7);
    expect(rows.map((r) => r.vignetteId)).toEqual(Array.from({ length: VIGNETTES }, (_, i) => `q${i}`));
    expect(rows[1]!.metadata).toEqual({ topic: 'odd' });
    let flips = 0;
    for (const row of rows) {
      expect(row.cells.map((c) => c.model)).toEqual(MODELS);
      for (const cell of row.cells) {
        const e = exp.get(`${row.vignetteId}|${cell.model}`)!;
        expect(cell.epochs).toEqual(e.epochs);
        expect(cell.scored).toBe(EPOCHS);
        expect(cell.passed).toBe(e.passed);
        expect(cell.reduced).toBeCloseTo(e.mean, 12);
        expect(cell.flipRate).toBeCloseTo(e.flip!, 12);
        expect(cell.judgeDisagreement).toBeNull();
        if (e.flip! > 0) flips += 1;
      }
    }
    // The mocks are right 80 % and 60 % of the time: some vignettes flip, not all.
    expect(flips).toBeGreaterThan(0);
    expect(flips).toBeLessThan(VIGNETTES * MODELS.length);

    const best = await allRows({ scorer: 'exact', reducer: 'max' }, 50);
    for (const row of best) for (const cell of row.cells) expect(cell.reduced).toBe(exp.get(`${row.vignetteId}|${cell.model}`)!.max);
  });

  it('orders by flip rate and by judge disagreement, largest first, the same across pages', async () => {
    const exact = expected('exact');
    const byFlip = await allRows({ scorer: 'exact', sort: 'flip_rate' }, 5);
    expect(byFlip.map((r) => r.vignetteId)).toEqual(expectedOrder(exact, (e) => e.flip));
    expect(byFlip.map((r) => r.vignetteId)).not.toEqual(Array.from({ length: VIGNETTES }, (_, i) => `q${i}`));

    const judged = expected('judged');
    const byJudges = await allRows({ scorer: 'judged', sort: 'judge_disagreement' }, 4);
    expect(byJudges.map((r) => r.vignetteId)).toEqual(expectedOrder(judged, (e) => e.spread));
    let disagreements = 0;
    for (const row of byJudges) {
      for (const cell of row.cells) {
        const e = judged.get(`${row.vignetteId}|${cell.model}`)!;
        expect(cell.epochs).toEqual(e.epochs);
        expect(cell.judgeDisagreement).toBeCloseTo(e.spread!, 12);
        expect(cell.passed).toBe(e.passed);
        if (e.spread! > 0) disagreements += 1;
      }
    }
    expect(disagreements).toBeGreaterThan(0);
  });

  it('refuses what it cannot answer, naming the field', async () => {
    await expect(engine.service.scoreMatrix({ runId, limit: 0 })).rejects.toMatchObject({ code: 'invalid_input', where: 'limit' });
    await expect(engine.service.scoreMatrix({ runId, scorer: 'nope' })).rejects.toMatchObject({ code: 'not_found', where: 'scorer' });
    await expect(engine.service.scoreMatrix({ runId: 'r-none' })).rejects.toMatchObject({ code: 'not_found', where: 'runId' });
    const page = await engine.service.scoreMatrix({ runId, cursor: VIGNETTES + 5 });
    expect(page.rows).toEqual([]);
    expect(page.nextCursor).toBeNull();
  });
});

describe('one vignette side by side', () => {
  it("gives every model's response at every epoch with every score and the judges' rationale", async () => {
    const detail = await engine.service.scoreDetail({ runId, vignetteId: 'q7' });
    expect(detail.vignette).toMatchObject({ id: 'q7', target: 'C', metadata: { topic: 'odd' } });
    expect(detail.responses.map((r) => [r.model, r.epoch])).toEqual(MODELS.flatMap((m) => [1, 2, 3].map((e) => [m, e])));
    const exact = raw('exact').filter((r) => r.vignette_id === 'q7');
    const judged = raw('judged').filter((r) => r.vignette_id === 'q7');
    const responses = engine.store.db.prepare('SELECT seq, response FROM responses').all() as { seq: number; response: string }[];
    for (const r of detail.responses) {
      expect(r.response).toBe(responses.find((x) => x.seq === r.seq)!.response);
      expect(r.scores.map((s) => [s.scorer, s.judge])).toEqual([
        ['exact', null],
        ['judged', 'mock-judge'],
        ['judged', 'mock-judge-2'],
      ]);
      const e = exact.find((x) => x.seq === r.seq)!;
      expect(r.scores[0]).toMatchObject({ value: e.value, passed: e.passed === 1, explanation: e.explanation ?? '' });
      for (const [i, s] of r.scores.slice(1).entries()) {
        const j = judged.find((x) => x.seq === r.seq && x.judge === i)!;
        expect(s).toMatchObject({ value: j.value, passed: j.passed === 1, explanation: j.explanation });
        // The judge's rationale: its verdict and its reason.
        expect(s.explanation).toMatch(/^(pass|fail): /);
      }
    }
    await expect(engine.service.scoreDetail({ runId, vignetteId: 'nope' })).rejects.toMatchObject({ code: 'not_found', where: 'vignetteId' });
  });
});

describe('a run read in several ranges', () => {
  it('orders 600 vignettes by flip rate as the raw rows do, page after page at any depth', async () => {
    const dir = tempDir();
    const dataDir = join(dir.dir, 'data');
    // 600 vignettes x 2 models x 4 epochs: about 1,000 verdicts a range makes several ranges.
    writeStoredRun(dataDir, { runId: 'rbig', vignettes: 600, epochs: 4, models: [{ model: 'mock-strong', accuracy: 0.8 }, { model: 'mock-weak', accuracy: 0.6 }] });
    const e = openEngine({ dataDir, tickMs: 20 });
    try {
      await e.service.scoreRun({ runId: 'rbig', scorers: { scorers: [{ name: 'exact', type: 'match' }] } });
      e.scoring.start();
      await e.scoring.finish('rbig');
      const order = expectedOrder(expected('exact', raw('exact', 'rbig', e), 4), (x) => x.flip);
      const seen: string[] = [];
      for (let cursor: number | null = 0; cursor !== null; ) {
        const page: ScoreMatrixPage = await e.service.scoreMatrix({ runId: 'rbig', sort: 'flip_rate', limit: 250, cursor });
        seen.push(...page.rows.map((r) => r.vignetteId));
        cursor = page.nextCursor;
      }
      expect(seen).toEqual(order);
      const deep = await e.service.scoreMatrix({ runId: 'rbig', sort: 'flip_rate', limit: 3, cursor: 401 });
      expect(deep.rows.map((r) => r.vignetteId)).toEqual(order.slice(401, 404));
    } finally {
      await e.close();
      dir.cleanup();
    }
  });
});
