/**
 * The score cells of a page of responses, one per record and scorer version: one read of the
 * scores' primary key per page, so a page costs what it shows, not what the run holds.
 * Runs on: Node (core).
 */
import type { ResponseScoreCell } from './response-search.js';
import { SEVERITY_NAME } from './score-shapes.js';
import type { Store } from './store.js';

interface CellRow {
  scorer_id: number;
  seq: number;
  value: number;
  passed: number | null;
  severity: number;
}

/** The score cells of a page's records: a room of the store, on its connection. */
export class ResponseScores {
  private readonly cells;

  constructor(store: Store) {
    const db = store.db;
    // json_each hands the page's seqs over as one parameter; each (scorer, seq) is a seek on the scores' key.
    this.cells = db.prepare<[string, string], CellRow>(
      `SELECT sc.scorer_id, sc.seq, sc.value, sc.passed, sc.severity
       FROM json_each(?) ids CROSS JOIN json_each(?) seqs CROSS JOIN scores sc ON sc.scorer_id = ids.value AND sc.seq = seqs.value
       WHERE sc.failed = 0`,
    );
  }

  /** For each seq, one cell per scorer version in `scorerIds`' order (null: no verdict). */
  of(scorerIds: readonly number[], seqs: readonly number[]): Map<number, Array<ResponseScoreCell | null>> {
    const out = new Map<number, Array<ResponseScoreCell | null>>(seqs.map((seq) => [seq, scorerIds.map(() => null)]));
    if (scorerIds.length === 0 || seqs.length === 0) return out;
    const column = new Map(scorerIds.map((id, i) => [id, i]));
    const sums = new Map<string, { sum: number; n: number; passed: boolean | null; severity: number }>();
    for (const row of this.cells.all(JSON.stringify(scorerIds), JSON.stringify(seqs))) {
      const key = `${row.seq}:${row.scorer_id}`;
      const acc = sums.get(key) ?? { sum: 0, n: 0, passed: null, severity: 0 };
      acc.sum += row.value;
      acc.n += 1;
      if (row.passed !== null) acc.passed = (acc.passed ?? true) && row.passed === 1;
      acc.severity = Math.max(acc.severity, row.severity);
      sums.set(key, acc);
    }
    for (const [key, acc] of sums) {
      const [seq, scorerId] = key.split(':').map(Number) as [number, number];
      out.get(seq)![column.get(scorerId)!] = { value: acc.sum / acc.n, passed: acc.passed, severity: SEVERITY_NAME[acc.severity] ?? 'none' };
    }
    return out;
  }
}
