/**
 * Scores next to answers: `responses` on a real engine (real SQLite in a temp dir), mock-strong
 * against mock-weak over two epochs, scored by an exact-match rule and a word-count rule. Every
 * page is checked against the raw score rows read here with plain SQL: each record's score cells,
 * the failures-only filter (for one scorer and for any), passes, the unscored, a metadata field,
 * the sort by a scorer's value and by latency (paged by offset, every record once), and the same
 * search over HTTP, where an unknown scorer is a 400 naming the field. Paged by `after` (keyset),
 * every order gives what the older cursor gives, ties by seq; absurd sorts, orders, starts, limits,
 * texts and metadata keys are 400s naming the field, and a search's % and _ are literal. The Results grid searched
 * and paged gives each vignette the cells the whole grid does; the CSV export with `scores` carries
 * a column per scorer holding the stored verdicts.
 * Runs on: Node (tests).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHttpServer } from '../../core/http/api.js';
import type { ResponsesInput, ScoredResponse } from '../../core/service/contract.js';
import type { Engine } from '../../core/service/engine.js';
import { useScoredRun } from '../helpers/scored-run.js';
import { send } from '../http/harness.js';

const TOKEN = 'responses-search-token-0123456789';
let engine: Engine;
let runId: string;
let dir: string;
useScoredRun(
  { vignettes: 25, epochs: 2, scorers: { scorers: [{ name: 'exact', type: 'match' }, { name: 'short', type: 'words', max: 8 }] } },
  (run) => ({ engine, runId, dir } = run),
);

interface Raw {
  seq: number;
  name: string;
  value: number;
  passed: number | null;
}

function raw(): Raw[] {
  return engine.store.db
    .prepare(
      `SELECT sc.seq, s.name, sc.value, sc.passed FROM scores sc JOIN scorers s ON s.id = sc.scorer_id
       JOIN responses r ON r.seq = sc.seq JOIN jobs j ON j.id = r.job_id WHERE j.run_id = ? AND sc.failed = 0`,
    )
    .all(runId) as Raw[];
}

/** Every page of a search, in order. */
async function all(input: Omit<ResponsesInput, 'runId'>): Promise<ScoredResponse[]> {
  const items: ScoredResponse[] = [];
  let cursor: number | undefined;
  for (;;) {
    const page = await engine.service.responses({ runId, limit: 7, ...input, ...(cursor === undefined ? {} : { cursor }) });
    items.push(...page.items);
    if (page.nextCursor === null) return items;
    cursor = page.nextCursor;
  }
}

describe('responses with their scores', () => {
  it('gives every record one cell per scorer, as the score rows have it', async () => {
    const page = await engine.service.responses({ runId, limit: 1000 });
    expect(page.scorers.map((s) => [s.name, s.kind])).toEqual([
      ['exact', 'pass_fail'],
      ['short', 'pass_fail'],
    ]);
    expect(page.items).toHaveLength(100);
    const rows = raw();
    for (const r of page.items) {
      page.scorers.forEach((s, i) => {
        const own = rows.find((x) => x.seq === r.seq && x.name === s.name)!;
        expect(r.scores[i]).toMatchObject({ value: own.value, passed: own.passed === null ? null : own.passed === 1 });
      });
    }
  });

  it('filters failures, passes and the unscored, for one scorer or any', async () => {
    const rows = raw();
    const failed = (name?: string) => new Set(rows.filter((r) => r.passed === 0 && (name === undefined || r.name === name)).map((r) => r.seq));
    const exactFails = (await all({ verdict: 'fail', scorer: 'exact' })).map((r) => r.seq);
    expect(exactFails.length).toBeGreaterThan(0);
    expect(exactFails.length).toBeLessThan(100);
    expect(new Set(exactFails)).toEqual(failed('exact'));
    expect(new Set((await all({ verdict: 'fail' })).map((r) => r.seq))).toEqual(failed());
    const passes = (await all({ verdict: 'pass', scorer: 'exact' })).map((r) => r.seq);
    expect(passes.length + exactFails.length).toBe(100);
    expect(await all({ verdict: 'unscored' })).toEqual([]);
    // Filters combine: the weak model's failures only.
    const weak = await all({ verdict: 'fail', scorer: 'exact', model: 'mock-weak' });
    expect(weak.every((r) => r.model === 'mock-weak' && r.scores[0]?.passed === false)).toBe(true);
  });

  it('filters by a metadata field, with or without its value', async () => {
    const odd = await all({ metaKey: 'topic', metaValue: 'odd' });
    expect(odd).toHaveLength(12 * 4);
    expect(odd.every((r) => r.metadata?.topic === 'odd')).toBe(true);
    expect(await all({ metaKey: 'topic' })).toHaveLength(100);
    expect(await all({ metaKey: 'nothing' })).toEqual([]);
  });

  it('sorts by a scorer and by a column, page by page, every record once', async () => {
    const byScore = await all({ sort: 'score', scorer: 'short', order: 'desc' });
    expect(new Set(byScore.map((r) => r.seq)).size).toBe(100);
    const values = byScore.map((r) => r.scores[1]!.value);
    expect(values).toEqual([...values].sort((a, b) => b - a));
    const byLatency = await all({ sort: 'latency' });
    expect(byLatency).toHaveLength(100);
    const lat = byLatency.map((r) => r.latencyMs);
    expect(lat).toEqual([...lat].sort((a, b) => a - b));
    const newestFirst = (await all({ order: 'desc' })).map((r) => r.seq);
    expect(newestFirst).toEqual([...newestFirst].sort((a, b) => b - a));
    const byVignette = (await all({ sort: 'vignette', text: 'question 1' })).map((r) => r.vignetteId);
    expect(byVignette).toEqual([...byVignette].sort());
    expect(byVignette.length).toBe(11 * 4);
  });

  it('refuses an unknown scorer and a value without its key, naming the field', async () => {
    await expect(engine.service.responses({ runId, verdict: 'fail', scorer: 'nope' })).rejects.toMatchObject({ code: 'invalid_input', where: 'scorer' });
    await expect(engine.service.responses({ runId, metaValue: 'odd' })).rejects.toMatchObject({ where: 'metaValue' });
  });

  it('serves the same search over HTTP', async () => {
    const app = createHttpServer(engine, { token: TOKEN });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const address = app.server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      const get = (path: string) => send(port, 'GET', path, { headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${TOKEN}` } });
      const res = await get(`/runs/${runId}/responses?verdict=fail&scorer=exact&sort=score&order=desc&limit=1000`);
      expect(res.status, res.text).toBe(200);
      const body = res.json as { items: ScoredResponse[]; scorers: Array<{ name: string }> };
      expect(body.scorers.map((s) => s.name)).toEqual(['exact', 'short']);
      expect(new Set(body.items.map((r) => r.seq))).toEqual(new Set(raw().filter((r) => r.name === 'exact' && r.passed === 0).map((r) => r.seq)));
      const bad = await get(`/runs/${runId}/responses?verdict=fail&scorer=nope`);
      expect(bad.status).toBe(400);
      expect(bad.json).toMatchObject({ ok: false, error: { where: 'scorer' } });
    } finally {
      await app.close();
    }
  });
});

describe('paging and the boundary', () => {
  /** Every page by `after`, in the order shown. */
  async function byAfter(input: Omit<ResponsesInput, 'runId'>): Promise<number[]> {
    const seqs: number[] = [];
    for (let after: number | undefined, i = 0; i < 100; i++) {
      const page = await engine.service.responses({ runId, limit: 7, ...input, ...(after === undefined ? {} : { after }) });
      seqs.push(...page.items.map((r) => r.seq));
      if (page.nextAfter === null) return seqs;
      after = page.nextAfter;
    }
    throw new Error('more pages than records');
  }

  it('pages by after in every order as the older cursor does: every record once, ties by seq', async () => {
    for (const input of [{}, { order: 'desc' }, { sort: 'score', scorer: 'exact' }, { sort: 'score', scorer: 'short', order: 'desc' }, { sort: 'latency' }, { sort: 'tokens', order: 'desc' }, { sort: 'model' }] as const) {
      const seqs = await byAfter(input);
      expect(seqs, JSON.stringify(input)).toEqual((await all(input)).map((r) => r.seq));
      expect(new Set(seqs).size).toBe(100);
    }
    // The exact-match scorer's values tie (0 or 1): within a tie, seq order.
    const byExact = await all({ sort: 'score', scorer: 'exact' });
    for (let i = 1; i < byExact.length; i++) {
      const [a, b] = [byExact[i - 1]!, byExact[i]!];
      if (a.scores[0]!.value === b.scores[0]!.value) expect(a.seq).toBeLessThan(b.seq);
    }
  });

  it('refuses absurd sorts, orders, starts and filters over HTTP, naming the field, and changes nothing', async () => {
    const app = createHttpServer(engine, { token: TOKEN });
    await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const address = app.server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      const get = (query: string) => send(port, 'GET', `/runs/${runId}/responses?${query}`, { headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${TOKEN}` } });
      const refused: Array<[string, string]> = [
        ['sort=seq%3BDROP%20TABLE%20responses', 'sort'],
        ['sort=latency_ms', 'sort'],
        ['order=sideways', 'order'],
        ['after=-1', 'after'],
        ['after=1.5', 'after'],
        ['after=0', 'after'],
        ['after=abc', 'after'],
        ['cursor=-5', 'cursor'],
        ['limit=100000', 'limit'],
        [`text=${'x'.repeat(1001)}`, 'text'],
        ['metaKey=a%22%29%20OR%201%3D1', 'metaKey'],
        ['verdict=maybe', 'verdict'],
        ['after=1&cursor=1', 'after'],
        ['after=999999999', 'after'],
      ];
      for (const [query, where] of refused) {
        const res = await get(query);
        expect(res.status, query).toBe(400);
        expect((res.json as { error: { where?: string } }).error.where, query).toContain(where);
      }
      expect((await engine.service.responses({ runId, limit: 1000 })).items).toHaveLength(100);
      // LIKE's wildcards are found as written: no answer holds a % or an _.
      for (const text of ['%', '_', '%%', 'q_']) expect((await get(`text=${encodeURIComponent(text)}`)).json).toMatchObject({ items: [] });
      // The older cursor still pages a sorted search by offset, and after goes on from a record.
      const first = (await get('sort=latency&limit=5')).json as { items: ScoredResponse[]; nextCursor: number; nextAfter: number };
      expect(first.nextCursor).toBe(5);
      const byOffset = (await get('sort=latency&limit=5&cursor=5')).json as { items: ScoredResponse[] };
      const byKey = (await get(`sort=latency&limit=5&after=${first.nextAfter}`)).json as { items: ScoredResponse[]; nextCursor: null };
      expect(byKey.items.map((r) => r.seq)).toEqual(byOffset.items.map((r) => r.seq));
      expect(byKey.nextCursor).toBeNull();
    } finally {
      await app.close();
    }
  });
});

describe('the Results grid searched and paged', () => {
  it('pages through every matching vignette, each with the cells the whole grid gives it', async () => {
    const whole = await engine.service.scoreMatrix({ runId, scorer: 'exact', limit: 1000 });
    expect(whole.total).toBe(25);
    const cellsOf = new Map(whole.rows.map((r) => [r.vignetteId, r.cells]));
    const seen: string[] = [];
    for (let cursor: number | null = 0; cursor !== null; ) {
      const page = await engine.service.scoreMatrix({ runId, scorer: 'exact', search: 'Q1', limit: 4, cursor });
      expect(page.total).toBe(11);
      for (const row of page.rows) expect(row.cells).toEqual(cellsOf.get(row.vignetteId));
      seen.push(...page.rows.map((r) => r.vignetteId));
      cursor = page.nextCursor;
    }
    // q1 and q10..q19, in manifest order; the prompt ("question 1") and metadata are searched too.
    expect(seen).toEqual(['q1', ...Array.from({ length: 10 }, (_, i) => `q${10 + i}`)]);
    expect((await engine.service.scoreMatrix({ runId, search: 'odd', limit: 1000 })).total).toBe(12);
    const sorted = await engine.service.scoreMatrix({ runId, search: 'q2', sort: 'flip_rate', limit: 1000 });
    expect(sorted.rows.map((r) => r.vignetteId).sort()).toEqual(['q2', 'q20', 'q21', 'q22', 'q23', 'q24']);
    expect((await engine.service.scoreMatrix({ runId, search: 'nothing like it' })).rows).toEqual([]);
  });
});

/** A CSV's rows, quoted cells unquoted. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(cell), (cell = '');
    else if (c === '\n') row.push(cell), rows.push(row), (row = []), (cell = '');
    else cell += c;
  }
  return rows;
}

describe('the CSV export with score columns', () => {
  it('adds a column per scorer, each cell the verdict the score rows hold', async () => {
    const out = join(dir, 'scored.csv');
    const res = await engine.service.exportRun({ runId, format: 'csv', scores: true, outPath: out });
    expect(res.lines).toBe(100);
    const [header, ...rows] = parseCsv(readFileSync(out, 'utf8'));
    expect(header!.slice(-3)).toEqual(['est_cost_usd', 'score:exact', 'score:short']);
    const col = (name: string) => header!.indexOf(name);
    const page = await engine.service.responses({ runId, limit: 1000 });
    const bySeq = new Map(page.items.map((r) => [`${r.vignetteId}|${r.model}|${r.epoch}`, r]));
    const rawRows = raw();
    for (const row of rows) {
      const r = bySeq.get(`${row[col('vignette_id')]}|${row[col('model')]}|${row[col('epoch')]}`)!;
      for (const name of ['exact', 'short']) {
        const own = rawRows.find((x) => x.seq === r.seq && x.name === name)!;
        expect(row[col(`score:${name}`)]).toBe(own.passed === 1 ? 'pass' : 'fail');
      }
    }
    // Without the flag, the CSV is as before: no score columns.
    await engine.service.exportRun({ runId, format: 'csv', outPath: out });
    expect(parseCsv(readFileSync(out, 'utf8'))[0]!.at(-1)).toBe('est_cost_usd');
    await expect(engine.service.exportRun({ runId, format: 'inspect', scores: true, outPath: out })).rejects.toMatchObject({ where: 'format' });
  });
});
