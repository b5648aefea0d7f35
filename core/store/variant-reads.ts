/**
 * Which prompt variant and which underlying item each vignette of a run is, read from its metadata
 * (`variant`, `item`: what the imports write, or a manifest's own): the report compares variants
 * like models, paired by item. Read a range of vignette indices at a time, so a run of any size
 * never holds the event loop in one statement.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import type { RunId } from '../domain.js';

/** One vignette that names a variant: its id, the variant, and the item it poses (null: none named). */
export interface VignetteVariant {
  vignetteId: string;
  variant: string;
  item: string | null;
}

type VariantRow = [vignetteId: string, variant: string | number, item: string | number | null];

/** Vignette indices one statement reads. */
const RANGE = 5000;

export class VariantReads {
  private readonly range: Database.Statement<[string, number, number], VariantRow>;
  private readonly last: Database.Statement<[string], number | null>;

  constructor(db: Database.Database) {
    // A variant or an item counts when it is text or a number; anything else (an object, a boolean) is no variant.
    this.range = db
      .prepare<[string, number, number], VariantRow>(
        `SELECT vignette_id, json_extract(metadata, '$.variant'),
                IIF(json_type(metadata, '$.item') IN ('text', 'integer', 'real'), json_extract(metadata, '$.item'), NULL)
         FROM vignettes
         WHERE run_id = ? AND idx BETWEEN ? AND ? AND metadata IS NOT NULL
           AND json_type(metadata, '$.variant') IN ('text', 'integer', 'real')
         ORDER BY idx`,
      )
      .raw(true);
    this.last = db.prepare<[string], number | null>(`SELECT MAX(idx) FROM vignettes WHERE run_id = ?`).pluck();
  }

  /** The run's vignettes that name a variant, in manifest order, a range of indices per page. */
  *of(runId: RunId): Generator<VignetteVariant[], void, undefined> {
    const last = this.last.get(runId) ?? -1;
    for (let lo = 0; lo <= last; lo += RANGE) {
      const rows = this.range.all(runId, lo, lo + RANGE - 1);
      if (rows.length > 0) yield rows.map(([vignetteId, variant, item]) => ({ vignetteId, variant: String(variant), item: item === null ? null : String(item) }));
    }
  }
}
