/**
 * Every order of the Responses view gives what a plain sort of the run's records gives, page after
 * page: two runs whose records interleave in seq, latencies and token counts with many ties, a
 * single-judge scorer with tied values, failed calls and unscored records, a two-judge panel (sorted
 * by its judges' mean) and a scorer with no scores at all. Each order, both ways, alone and with
 * filters, is walked by `after` (keyset) and by the older offset cursor, in pages of 7, on the
 * store's connection and through the reader's thread: every record once, none skipped, ties by
 * seq. The orders an index gives are read by that index (the query plan says so, with no sort of
 * the run). A search's % and _ are literal; a start that is not the run's record is refused.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IndexedVignette, ResponseRecord, RunOptions } from '../../core/domain.js';
import type { ResponseSortKey } from '../../core/store/response-search.js';
import type { ResponseFilter, ResponsesPageRequest, StoredResponsesPage } from '../../core/store/run-queries.js';
import { Store } from '../../core/store/store.js';
import type { StoredResponse } from '../../core/domain.js';
import { tempDir } from '../helpers/temp.js';

const OPTIONS: RunOptions = { concurrency: 4, sampling: {}, privacy: 'strict', skipPromptCache: false, shareCacheAcrossEpochs: false };
const N = 23;
const SINGLE = 901;
const PANEL = 902;
const NONE = 903;

let tmp: ReturnType<typeof tempDir>;
let store: Store;
/** The scores as written: scorer -> seq -> judge values (failed calls left out, as a verdict they are not). */
const written = new Map<number, Map<number, number[]>>();

function vignettes(run: string): IndexedVignette[] {
  return Array.from({ length: N }, (_, i) => ({ index: i, id: `${run}-v${String(i % 9).padStart(2, '0')}-${i}`, prompt: `question ${i}`, metadata: { topic: `t${i % 3}` } }));
}

/** Answers with LIKE's wildcards in a few: "100% sure", "a_c", and ones that only a wildcard would match. */
function answerOf(i: number): string {
  return i % 11 === 0 ? `answer ${i}: 100% sure` : i % 7 === 0 ? `answer ${i}: a_c` : `answer ${i}: abc 1000 sure`;
}

beforeAll(() => {
  tmp = tempDir();
  store = new Store(join(tmp.dir, 'orders.db'));
  const jobsOf = (run: string) => {
    store.runs.beginStaging(run);
    store.runs.stageVignettes(run, vignettes(run));
    store.runs.insertRun({ id: run, manifestPath: '/m.jsonl', models: ['m1', 'm2'], epochs: 2, vignetteCount: N, options: OPTIONS });
    return store.jobs.insertJobs(run, ['m1', 'm2'].flatMap((model) => [1, 2].map((epoch) => ({ model, epoch }))));
  };
  const a = jobsOf('ra');
  const b = jobsOf('rb');
  // Both runs land in turns, a few records at a time, so their seqs interleave.
  const all = [...a.map((j) => ['ra', j] as const), ...b.map((j) => ['rb', j] as const)];
  const attempts = new Map(all.map(([, j]) => [j.id, store.jobs.startAttempt(j.id, 'w')!]));
  for (let lo = 0; lo < N; lo += 4) {
    for (const [run, job] of all) {
      const batch: ResponseRecord[] = [];
      for (let i = lo; i < Math.min(N, lo + 4); i++) {
        batch.push({
          runId: run, jobId: job.id, vignetteId: `${run}-v${String(i % 9).padStart(2, '0')}-${i}`, vignetteIndex: i, model: job.model, epoch: job.epoch,
          prompt: '', response: answerOf(i), usage: { inputTokens: 5, outputTokens: (i * 3 + job.epoch) % 4 },
          latencyMs: (i * 7 + job.id) % 5, host: 'h', cached: false, sampling: {}, finishedAt: 0,
        });
      }
      store.records.append(job.id, attempts.get(job.id)!, batch);
    }
  }
  // Scores written as the scoring does, straight into the table (the scorers' own rows are not needed to sort).
  const insert = store.db.prepare(`INSERT INTO scores (scorer_id, seq, judge, value, passed, severity, explanation, failed) VALUES (?, ?, ?, ?, ?, 0, NULL, ?)`);
  const seqs = (store.db.prepare(`SELECT seq FROM responses ORDER BY seq`).all() as Array<{ seq: number }>).map((r) => r.seq);
  const keep = (scorer: number, seq: number, value: number) => {
    const bySeq = written.get(scorer) ?? new Map<number, number[]>();
    written.set(scorer, bySeq);
    bySeq.set(seq, [...(bySeq.get(seq) ?? []), value]);
  };
  for (const seq of seqs) {
    if (seq % 5 === 0) continue; // unscored
    if (seq % 13 === 0) insert.run(SINGLE, seq, 0, 0, null, 1); // the judge's call failed: no verdict
    else {
      const value = seq % 3 === 0 ? 1 : 0; // ties, many
      insert.run(SINGLE, seq, 0, value, value, 0);
      keep(SINGLE, seq, value);
    }
    if (seq % 4 !== 0) {
      for (const judge of [0, 1]) {
        const value = ((seq + judge) % 3) / 2;
        insert.run(PANEL, seq, judge, value, null, 0);
        keep(PANEL, seq, value);
      }
    }
  }
});
afterAll(() => {
  store?.close();
  tmp?.cleanup();
});

/** The run's records as a plain read gives them, with no filter. */
function everyRecord(run: string): StoredResponse[] {
  return store.queries.runResults(run);
}

function keyOf(r: StoredResponse, by: ResponseSortKey, scorerId: number): number | string | null {
  switch (by) {
    case 'seq':
      return r.seq;
    case 'vignette':
      return r.vignetteId;
    case 'model':
      return r.model;
    case 'epoch':
      return r.epoch;
    case 'latency':
      return r.latencyMs;
    case 'tokens':
      return r.usage.outputTokens;
    case 'score': {
      const values = written.get(scorerId)?.get(r.seq);
      return values === undefined ? null : values.reduce((s, v) => s + v, 0) / values.length;
    }
  }
}

/** The plain answer: the matches sorted in JavaScript, NULL keys last, ties by seq the same way. */
function expected(run: string, keep: (r: StoredResponse) => boolean, by: ResponseSortKey, desc: boolean, scorerId: number): number[] {
  const sign = desc ? -1 : 1;
  return everyRecord(run)
    .filter(keep)
    .map((r) => ({ seq: r.seq, key: keyOf(r, by, scorerId) }))
    .sort((x, y) => {
      if ((x.key === null) !== (y.key === null)) return x.key === null ? 1 : -1;
      if (x.key !== null && y.key !== null && x.key !== y.key) return (x.key < y.key ? -1 : 1) * sign;
      return (x.seq - y.seq) * sign;
    })
    .map((r) => r.seq);
}

type Reader = (run: string, filter: ResponseFilter, page: ResponsesPageRequest) => Promise<StoredResponsesPage>;
const onConnection: Reader = async (run, filter, page) => store.queries.responses(run, filter, page);
const inThread: Reader = (run, filter, page) => store.readResponses(run, filter, page);

/** Every page, following `nextAfter` (or the older `nextCursor`), as seqs in the order shown. */
async function walk(read: Reader, run: string, filter: ResponseFilter, by: 'after' | 'cursor'): Promise<number[]> {
  const seqs: number[] = [];
  let page: ResponsesPageRequest = { limit: 7 };
  for (let i = 0; i < 200; i++) {
    const got = await read(run, filter, page);
    seqs.push(...got.items.map((r) => r.seq));
    const next = by === 'after' ? got.nextAfter : got.nextCursor;
    if (next === null) return seqs;
    page = { limit: 7, [by]: next };
  }
  throw new Error('more pages than records');
}

const SORTS: Array<{ by: ResponseSortKey; scorerId?: number }> = [
  { by: 'seq' },
  { by: 'vignette' },
  { by: 'model' },
  { by: 'epoch' },
  { by: 'latency' },
  { by: 'tokens' },
  { by: 'score', scorerId: SINGLE },
  { by: 'score', scorerId: PANEL },
  { by: 'score', scorerId: NONE },
];

const FILTERS: Array<{ name: string; filter: ResponseFilter; keep: (r: StoredResponse) => boolean }> = [
  { name: 'no filter', filter: {}, keep: () => true },
  { name: 'one model', filter: { model: 'm2' }, keep: (r) => r.model === 'm2' },
  { name: 'a text', filter: { text: 'ANSWER 1' }, keep: (r) => r.response.includes('answer 1') },
  {
    name: "a scorer's failures",
    filter: { verdict: { scorerIds: [SINGLE], is: 'fail' } },
    keep: (r) => written.get(SINGLE)?.get(r.seq)?.[0] === 0,
  },
  { name: 'a metadata value', filter: { metadata: { key: 'topic', value: 't1' } }, keep: (r) => r.metadata?.topic === 't1' },
  { name: 'one vignette', filter: { vignetteId: 'ra-v03-12' }, keep: (r) => r.vignetteId === 'ra-v03-12' },
];

describe('the Responses orders', () => {
  it('the runs interleave and the data has ties, unscored and failed records', () => {
    const a = everyRecord('ra').map((r) => r.seq);
    const b = everyRecord('rb').map((r) => r.seq);
    expect(a).toHaveLength(N * 4);
    expect(Math.min(...b)).toBeLessThan(Math.max(...a));
    expect(expected('ra', () => true, 'score', false, SINGLE).filter((s) => !written.get(SINGLE)!.has(s)).length).toBeGreaterThan(10);
  });

  for (const { name, filter, keep } of FILTERS) {
    for (const sort of SORTS) {
      for (const desc of [false, true]) {
        const title = `${sort.by}${sort.scorerId ? ` (scorer ${sort.scorerId})` : ''} ${desc ? 'desc' : 'asc'}, ${name}`;
        it(`pages ${title} as a plain sort does, by after and by cursor`, async () => {
          const want = expected(filter.vignetteId === undefined ? 'ra' : 'ra', keep, sort.by, desc, sort.scorerId ?? -1);
          expect(want.length).toBeGreaterThan(0);
          const f: ResponseFilter = { ...filter, sort: { by: sort.by, scorerId: sort.scorerId, desc } };
          expect(await walk(onConnection, 'ra', f, 'after')).toEqual(want);
          expect(await walk(inThread, 'ra', f, 'after')).toEqual(want);
          expect(await walk(onConnection, 'ra', f, 'cursor')).toEqual(want);
        });
      }
    }
  }

  it('reads latency, tokens, a single-judge score and the vignette order by their indexes, with no sort of the run', () => {
    for (const [by, index] of [
      ['latency', 'responses_by_latency'],
      ['tokens', 'responses_by_output_tokens'],
      ['score', 'scores_by_value'],
      ['vignette', 'vignettes_by_id'],
    ] as const) {
      for (const desc of [false, true]) {
        const query = store.queries.responsesQuery('ra', { sort: { by, scorerId: SINGLE, desc } }, { limit: 7, after: everyRecord('ra')[5]!.seq })!;
        const plan = (store.db.prepare(`EXPLAIN QUERY PLAN ${query.sql}`).all(query.params) as Array<{ detail: string }>).map((r) => r.detail).join('\n');
        expect(plan, `${by} ${desc ? 'desc' : 'asc'}`).toContain(index);
        expect(plan, `${by} ${desc ? 'desc' : 'asc'}`).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
      }
    }
  });

  it("finds a search's % and _ as written, not as LIKE's wildcards", async () => {
    const percent = (await inThread('ra', { text: '100%' }, { limit: 1000 })).items;
    expect(percent.length).toBeGreaterThan(0);
    expect(percent.every((r) => r.response.includes('100%'))).toBe(true);
    const underscore = (await inThread('ra', { text: 'a_c' }, { limit: 1000 })).items;
    expect(underscore.length).toBeGreaterThan(0);
    expect(underscore.every((r) => r.response.includes('a_c'))).toBe(true);
    expect((await inThread('ra', { text: '%' }, { limit: 1000 })).items.map((r) => r.seq)).toEqual(percent.map((r) => r.seq));
    expect((await inThread('ra', { text: '_' }, { limit: 1000 })).items.every((r) => r.response.includes('_') || r.vignetteId.includes('_'))).toBe(true);
  });

  it('refuses to start after a record that is not the run’s', async () => {
    const other = everyRecord('rb')[0]!.seq;
    await expect(inThread('ra', { sort: { by: 'latency' } }, { after: other })).rejects.toMatchObject({ code: 'invalid_input', where: 'after' });
    await expect(inThread('ra', {}, { after: 10_000_000 })).rejects.toMatchObject({ code: 'invalid_input', where: 'after' });
  });
});
