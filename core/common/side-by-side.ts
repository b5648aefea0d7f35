/**
 * The side-by-side table's shape, once for both of the app's side-by-side views (Responses' panel
 * and a score's detail dialog): one vignette's records, one row a model, one column an epoch, each
 * cell that (model, epoch)'s records in sequence order. Browser-safe: it imports nothing, so the
 * renderer may import it.
 * Runs on: Node (core) and the renderer (browser-safe).
 */

/** What a record needs to have a place in the table. */
export interface SideBySideRecord {
  readonly model: string;
  readonly epoch: number;
  readonly seq: number;
}

export interface SideBySideTable<R extends SideBySideRecord> {
  /** The rows: the models given, else the records' models in the order they first appear. */
  readonly models: readonly string[];
  /** The columns: every epoch a record has, ascending. */
  readonly epochs: readonly number[];
  /** The records of one cell, in sequence order (none: an empty cell). */
  cell(model: string, epoch: number): readonly R[];
}

export function sideBySide<R extends SideBySideRecord>(records: readonly R[], models?: readonly string[]): SideBySideTable<R> {
  const cells = new Map<string, R[]>();
  for (const r of records) {
    const key = `${r.model}\u0000${r.epoch}`;
    const cell = cells.get(key);
    if (cell) cell.push(r);
    else cells.set(key, [r]);
  }
  for (const cell of cells.values()) cell.sort((a, b) => a.seq - b.seq);
  return {
    models: models ?? [...new Set(records.map((r) => r.model))],
    epochs: [...new Set(records.map((r) => r.epoch))].sort((a, b) => a - b),
    cell: (model, epoch) => cells.get(`${model}\u0000${epoch}`) ?? [],
  };
}
