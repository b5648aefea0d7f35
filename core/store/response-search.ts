/**
 * The Responses view's search beyond model, epoch and text: records by their scorers' verdicts and
 * by a metadata field, and the order of the pages. The WHERE clauses here join the page query of
 * `response-page-query.ts`, which also turns the sort into SQL; the score cells of a page are read
 * apart (response-scores.ts).
 * Runs on: Node (core).
 */
import type { Severity } from '../domain.js';

export type ResponseVerdict = 'fail' | 'pass' | 'unscored';
export type ResponseSortKey = 'seq' | 'vignette' | 'model' | 'epoch' | 'latency' | 'tokens' | 'score';

/** What the search adds to a responses filter; a field left out does not filter (or sorts by seq). */
export interface ResponseScoreFilter {
  /**
   * Only records with this verdict from the scorer versions named: `fail` some judge of one of them
   * failed it, `pass` one passed it and none failed it, `unscored` none gave it a verdict.
   */
  verdict?: { scorerIds: readonly number[]; is: ResponseVerdict } | undefined;
  /** Only records whose vignette has this metadata key (with this value, compared as text, when given). */
  metadata?: { key: string; value?: string | undefined } | undefined;
  /**
   * The order of the pages, ties broken by seq in the same direction; `score` sorts by a scorer's
   * value (its judges' mean), unscored records last either way.
   */
  sort?: { by: ResponseSortKey; scorerId?: number | undefined; desc?: boolean | undefined } | undefined;
}

/** One scorer's verdict on one record, over its judges (the sweep's own record, not a retry's). */
export interface ResponseScoreCell {
  /** The judges' mean value. */
  value: number;
  /** Pass/fail: false when some judge failed it, true when they all passed it; null for graded scorers. */
  passed: boolean | null;
  /** The worst severity any judge gave. */
  severity: Severity;
}

/** A verdict among the scorer versions `@vs0, @vs1, ...` (failed = 0: the judge gave one). */
const verdictOf = (ids: string, passed: 0 | 1 | null) =>
  `EXISTS (SELECT 1 FROM scores sc WHERE sc.scorer_id IN (${ids}) AND sc.seq = s.seq AND sc.failed = 0${passed === null ? '' : ` AND sc.passed = ${passed}`})`;

/** The JSON path of a metadata key, quoted so that dots and brackets in it are part of the name. */
export const metadataPath = (key: string) => `$."${key}"`;

/** The WHERE clauses of a search's verdict and metadata filters (their parameters added to `params`). */
export function searchClauses(filter: ResponseScoreFilter, params: Record<string, unknown>): string[] {
  const where: string[] = [];
  if (filter.verdict) {
    const ids = filter.verdict.scorerIds.map((id, i) => ((params[`vs${i}`] = id), `@vs${i}`)).join(', ') || 'NULL';
    const is = filter.verdict.is;
    where.push(is === 'fail' ? verdictOf(ids, 0) : is === 'pass' ? `${verdictOf(ids, 1)} AND NOT ${verdictOf(ids, 0)}` : `NOT ${verdictOf(ids, null)}`);
  }
  if (filter.metadata) {
    params.metaPath = metadataPath(filter.metadata.key);
    if (filter.metadata.value === undefined) where.push(`json_type(v.metadata, @metaPath) IS NOT NULL`);
    else {
      where.push(`CAST(json_extract(v.metadata, @metaPath) AS TEXT) = @metaValue`);
      params.metaValue = filter.metadata.value;
    }
  }
  return where;
}
