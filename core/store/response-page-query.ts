/**
 * The SQL of one page of a run's records in any of the Responses view's orders, built so that a page
 * costs what it shows wherever an index can give the order: seq order walks the responses' key;
 * latency and output tokens walk their indexes; a single-judge scorer's value walks the scores'
 * value index, then the records it has no verdict on (unscored last, in seq order); the vignette
 * order walks the vignettes' id index. A page starts
 * after the last record of the one before (keyset paging: `after` is that record's seq, its sort key
 * read here by seq), so a deep page costs what the first does, and ties, broken by seq, never show a
 * record twice or skip one. The orders no index gives (model, epoch, a panel of judges'
 * mean, and any order within one vignette) are the same comparison over a sort of the matches; the
 * reader runs those off the main thread (response-reader.ts). The old offset paging (`offset`) is
 * kept for clients that page sorted results by offset.
 * Runs on: Node (core).
 */
import type { ResponseSortKey } from './response-search.js';

export const RESPONSE_COLUMNS = `s.seq, s.job_id, s.vignette_idx, s.response, s.input_tokens, s.output_tokens,
  s.cached_tokens, s.reasoning_tokens, s.latency_ms, s.host, s.cached, s.finished_at, s.finish_reason,
  j.run_id, j.model, j.epoch, v.vignette_id, v.prompt, v.system, v.messages, v.target, v.metadata, r.options`;

// CROSS JOIN keeps responses the outer loop, walked in seq order: a page (`seq > cursor ... LIMIT n`)
// then reads n rows, where letting SQLite start from the run's jobs sorted the whole run per page.
export const RESPONSE_JOINS = `FROM responses s
  CROSS JOIN jobs j ON j.id = s.job_id
  JOIN runs r ON r.id = j.run_id
  JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx`;

/** One vignette's records: from the run's jobs through the unique (job, vignette) key. */
export const VIGNETTE_RESPONSE_JOINS = `FROM jobs j
  CROSS JOIN responses s ON s.job_id = j.id AND s.vignette_idx = @idx
  JOIN runs r ON r.id = j.run_id
  JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx`;

/** A scorer's value walked in order through `scores_by_value`; the responses are looked up by seq. */
const SCORE_WALK_JOINS = `FROM scores sc
  CROSS JOIN responses s ON s.seq = sc.seq
  CROSS JOIN jobs j ON j.id = s.job_id
  JOIN runs r ON r.id = j.run_id
  JOIN vignettes v ON v.run_id = j.run_id AND v.idx = s.vignette_idx`;

/** The run's vignettes walked in id order (their index), each one's records through the (job, vignette) key. */
const VIGNETTE_WALK_JOINS = `FROM vignettes v
  CROSS JOIN jobs j ON j.run_id = v.run_id
  CROSS JOIN responses s ON s.job_id = j.id AND s.vignette_idx = v.idx
  JOIN runs r ON r.id = j.run_id`;

/** The sort keys that are columns (never NULL). */
const KEY_COLUMNS: Record<Exclude<ResponseSortKey, 'seq' | 'score'>, string> = {
  vignette: 'v.vignette_id',
  model: 'j.model',
  epoch: 'j.epoch',
  latency: 's.latency_ms',
  tokens: 's.output_tokens',
};

/** A scorer's value on a record: its judges' mean (NULL: no verdict). */
const MEAN_SCORE = `(SELECT AVG(x.value) FROM scores x WHERE x.scorer_id = @sortScorer AND x.seq = s.seq AND x.failed = 0)`;
/** Whether a record has a verdict from a single-judge scorer (its judge 0). */
const HAS_VERDICT = `EXISTS (SELECT 1 FROM scores x WHERE x.scorer_id = @sortScorer AND x.seq = s.seq AND x.judge = 0 AND x.failed = 0)`;

/**
 * How a page is read. `seq`: the responses' key. `index`: an index whose order is the sort's
 * (latency, tokens). `scoreWalk`: a single-judge scorer's values, then its unscored records.
 * `vignetteWalk`: the vignettes' id index, each vignette's few records sorted by seq.
 * `sorted`: any key, SQLite sorting the matches (the reader keeps it off the main thread).
 */
export type PagePlan = 'seq' | 'index' | 'scoreWalk' | 'vignetteWalk' | 'sorted';

export interface PageSort {
  by: ResponseSortKey;
  desc: boolean;
  /** The scorer a `score` sort reads (-1: none, every record unscored). */
  scorerId: number;
  /** Whether some verdict of that scorer comes from a judge other than its first (a panel's mean is not indexed). */
  panel: boolean;
}

export interface PageSpec {
  /** The run's filters as WHERE clauses over `s`, `j` and `v`, their parameters in `params`. */
  where: string[];
  params: Record<string, unknown>;
  /** One vignette's records (its index), read through the (job, vignette) key. */
  vignette: boolean;
  sort: PageSort;
  /** Rows to read: the page's size plus one, to know whether another page follows. */
  rows: number;
  /** Where the page starts: after a record whose sort key is `key` (keyset), or at an offset. */
  start: { after: number; key: number | string | null } | { offset: number } | null;
}

export function planOf(spec: Pick<PageSpec, 'sort' | 'vignette'>): PagePlan {
  const { by, panel } = spec.sort;
  if (by === 'seq') return 'seq';
  if (spec.vignette) return 'sorted';
  if (by === 'latency' || by === 'tokens') return 'index';
  if (by === 'vignette') return 'vignetteWalk';
  if (by === 'score' && !panel) return 'scoreWalk';
  return 'sorted';
}

/** The sort key of a record as SQL over `s`, `j` and `v` (NULL for a record a scorer has no verdict on). */
export function sortKeyOf(sort: PageSort): string {
  if (sort.by === 'seq') return 's.seq';
  if (sort.by === 'score') return sort.panel ? MEAN_SCORE : `(SELECT x.value FROM scores x WHERE x.scorer_id = @sortScorer AND x.seq = s.seq AND x.judge = 0 AND x.failed = 0)`;
  return KEY_COLUMNS[sort.by];
}

/**
 * Records after (key, seq) in the order `key dir, seq dir` with NULL keys last: a row-value
 * comparison where the key is never NULL, so SQLite seeks an index to it.
 */
function afterClause(key: string, nullable: boolean, cmp: '>' | '<', startKey: number | string | null): string {
  if (!nullable) return `(${key}, s.seq) ${cmp} (@afterKey, @after)`;
  if (startKey === null) return `(${key} IS NULL AND s.seq ${cmp} @after)`;
  return `(${key} IS NULL OR ${key} ${cmp} @afterKey OR (${key} = @afterKey AND s.seq ${cmp} @after))`;
}

/** The page's SQL; the parameters it names are in `spec.params` (the start's added there). */
export function pageSql(spec: PageSpec): string {
  const { sort, start } = spec;
  const params = spec.params;
  const dir = sort.desc ? 'DESC' : 'ASC';
  const cmp = sort.desc ? '<' : '>';
  const plan = planOf(spec);
  params.rows = spec.rows;
  if (sort.by === 'score') params.sortScorer = sort.scorerId;
  let page = '';
  if (start !== null && 'offset' in start) {
    params.offset = start.offset;
    page = ' OFFSET @offset';
  } else if (start !== null) {
    params.after = start.after;
    params.afterKey = start.key;
  }
  const keyset = start !== null && 'after' in start;
  const from = spec.vignette ? VIGNETTE_RESPONSE_JOINS : RESPONSE_JOINS;
  const select = (joins: string, where: string[], orderBy: string, limit: string) =>
    `SELECT ${RESPONSE_COLUMNS} ${joins} WHERE ${where.join(' AND ')} ORDER BY ${orderBy} LIMIT ${limit}`;
  const inRange = spec.vignette ? [] : ['s.seq BETWEEN @lo AND @hi'];
  const base = ['j.run_id = @runId', ...spec.where];

  if (plan === 'seq') {
    return select(from, [...base, ...inRange, ...(keyset ? [`s.seq ${cmp} @after`] : [])], `s.seq ${dir}`, `@rows${page}`);
  }
  if (plan === 'index') {
    const key = sortKeyOf(sort);
    // `+s.seq`: the run's seq range is checked, not walked, so SQLite takes the order from the key's index.
    const where = [...base, '+s.seq BETWEEN @lo AND @hi', ...(keyset ? [afterClause(key, false, cmp, null)] : [])];
    return select(from, where, `${key} ${dir}, s.seq ${dir}`, `@rows${page}`);
  }
  if (plan === 'vignetteWalk') {
    // The id bound alone seeks the vignettes' index; the row value then drops the records of the start's vignette already shown.
    const startAt = keyset ? [`v.vignette_id ${cmp}= @afterKey`, afterClause('v.vignette_id', false, cmp, null)] : [];
    return select(VIGNETTE_WALK_JOINS, ['v.run_id = @runId', ...base, ...startAt], `v.vignette_id ${dir}, s.seq ${dir}`, `@rows${page}`);
  }
  if (plan === 'scoreWalk') {
    // The scored records by value, then the unscored by seq; a page that starts among the unscored skips the first part.
    const afterUnscored = keyset && (start as { key: unknown }).key === null;
    const limit = page === '' ? '@rows' : '@rows + @offset';
    const unscored = select(from, [...base, ...inRange, `NOT ${HAS_VERDICT}`, ...(afterUnscored ? [`s.seq ${cmp} @after`] : [])], `s.seq ${dir}`, limit);
    if (afterUnscored) return unscored;
    const scoredWhere = [
      'sc.scorer_id = @sortScorer',
      'sc.judge = 0',
      'sc.failed = 0',
      // `+`: the seq range is checked, not walked, so the walk follows the value index.
      '+sc.seq BETWEEN @lo AND @hi',
      ...base,
      ...(keyset ? [`(sc.value, sc.seq) ${cmp} (@afterKey, @after)`] : []),
    ];
    const scored = select(SCORE_WALK_JOINS, scoredWhere, `sc.value ${dir}, sc.seq ${dir}`, limit);
    return `SELECT * FROM (${scored}) UNION ALL SELECT * FROM (${unscored}) LIMIT @rows${page}`;
  }
  const key = sortKeyOf(sort);
  const nullable = sort.by === 'score';
  const where = [...base, ...inRange, ...(keyset ? [afterClause(key, nullable, cmp, (start as { key: number | string | null }).key)] : [])];
  const orderBy = nullable ? `${key} IS NULL, ${key} ${dir}, s.seq ${dir}` : `${key} ${dir}, s.seq ${dir}`;
  return select(from, where, orderBy, `@rows${page}`);
}

/** The SQL reading the sort key of one record of the run (no row: the record is not the run's). */
export function startKeySql(sort: PageSort): string {
  return `SELECT ${sortKeyOf(sort)} AS k ${RESPONSE_JOINS} WHERE s.seq = @after AND j.run_id = @runId`;
}
