/**
 * The `responses` call: a page of a run's records filtered, searched and sorted by the store, each
 * priced at the run's kept prices and given one score cell per scorer version attached to the run.
 * A scorer is named by its name or its version; an unknown one is refused naming the field.
 * Runs on: Node (core).
 */
import { PanoptesError, type RunId } from '../domain.js';
import type { Catalog } from '../models/catalog.js';
import type { ResponseScoreFilter } from '../store/response-search.js';
import { ResponseScores } from '../store/response-scores.js';
import type { RunScorer } from '../store/score-shapes.js';
import type { ScoreStore } from '../store/score-store.js';
import type { Store } from '../store/store.js';
import type { ResponsesPage } from './contract.js';
import type { ValidInput } from './contract-dispatcher.js';
import { priceResponses } from './summaries.js';

/** The scorer versions a `scorer` field names (every one attached when it names none). */
function scorersNamed(attached: readonly RunScorer[], name: string | undefined): RunScorer[] {
  if (name === undefined) return [...attached];
  const byVersion = attached.filter((s) => s.version === name);
  const found = byVersion.length > 0 ? byVersion : attached.filter((s) => s.name === name);
  if (found.length === 0) {
    const names = attached.map((s) => s.name).join(', ') || 'none';
    throw new PanoptesError('invalid_input', `no scorer "${name}" on this run (its scorers: ${names})`, { where: 'scorer' });
  }
  return found;
}

export class ResponsePages {
  private readonly cells: ResponseScores;

  constructor(private readonly deps: { store: Store; scores: ScoreStore; catalog: Catalog }) {
    this.cells = new ResponseScores(deps.store);
  }

  async page(input: ValidInput<'responses'>): Promise<ResponsesPage> {
    const { runId, limit, cursor, after, verdict, scorer, metaKey, metaValue, sort, order, ...filter } = input;
    const attached = this.deps.scores.runScorers(runId);
    const search: ResponseScoreFilter = {};
    if (verdict !== undefined) search.verdict = { scorerIds: scorersNamed(attached, scorer).map((s) => s.scorerId), is: verdict };
    else if (scorer !== undefined && sort !== 'score') scorersNamed(attached, scorer);
    if (metaValue !== undefined && metaKey === undefined) {
      throw new PanoptesError('invalid_input', 'a metadata value needs its key (metaKey)', { where: 'metaValue' });
    }
    if (metaKey !== undefined) search.metadata = { key: metaKey, value: metaValue };
    if (sort !== undefined || order !== undefined) {
      const by = sort ?? 'seq';
      search.sort = { by, desc: order === 'desc' };
      if (by === 'score') search.sort.scorerId = scorersNamed(attached, scorer)[0]?.scorerId ?? -1;
    }
    if (after !== undefined && cursor !== undefined) {
      throw new PanoptesError('invalid_input', 'give after (the keyset) or cursor (the older paging), not both', { where: 'after' });
    }
    const page = await this.deps.store.readResponses(runId, { ...filter, ...search }, { limit, cursor, after });
    const cells = this.cells.of(
      attached.map((s) => s.scorerId),
      page.items.map((r) => r.seq),
    );
    const items = priceResponses(this.deps.store, this.deps.catalog, runId as RunId, page.items).map((r) =>
      Object.assign(r, { scores: cells.get(r.seq) ?? [] }),
    );
    return {
      items,
      scorers: attached.map((s) => ({ scorerId: s.scorerId, name: s.name, version: s.version, kind: s.kind })),
      nextCursor: page.nextCursor,
      nextAfter: page.nextAfter,
    };
  }
}
