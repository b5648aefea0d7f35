/**
 * The vignettes of a run whose id, prompt or metadata holds a text (any case): the Results grid's
 * search. Read in ranges of the manifest's order, a turn of the event loop between them, so a run
 * of a million vignettes is searched without holding the loop; only the matching indexes are kept.
 * Runs on: Node (core).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { RunId } from '../domain.js';
import type { Store } from './store.js';

/** Vignettes read per statement: a few milliseconds of scanning. */
const RANGE = 20_000;

export class VignetteSearch {
  private readonly range;
  private readonly count;

  constructor(store: Store) {
    this.range = store.db
      .prepare<[{ runId: string; lo: number; hi: number; text: string }], number>(
        `SELECT idx FROM vignettes WHERE run_id = @runId AND idx BETWEEN @lo AND @hi
           AND (instr(lower(vignette_id), @text) > 0 OR instr(lower(prompt), @text) > 0 OR instr(lower(COALESCE(metadata, '')), @text) > 0)
         ORDER BY idx`,
      )
      .pluck();
    this.count = store.db.prepare<[string], number>(`SELECT vignette_count FROM runs WHERE id = ?`).pluck();
  }

  /** The indexes, in manifest order, of the vignettes that hold `text`. */
  async matching(runId: RunId, text: string): Promise<number[]> {
    const needle = text.toLowerCase();
    const total = this.count.get(runId) ?? 0;
    const found: number[] = [];
    for (let lo = 0; lo < total; lo += RANGE) {
      found.push(...this.range.all({ runId, lo, hi: lo + RANGE - 1, text: needle }));
      if (lo + RANGE < total) await nextTurn();
    }
    return found;
  }
}
