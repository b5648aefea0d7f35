/**
 * The score report from hand-made cells: the leaderboard, consistency figures and pairs come out
 * as computed by hand; the cells' order does not matter; several judges average into one epoch;
 * `by` clusters and slices; K = 1 pass/fail switches to exact McNemar; two runs pair by vignette id;
 * absurd cells are refused with the cell named; and a large input hands the event loop back.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { buildRunComparison, buildScoreReport, type ReportOptions, type ScoreCell } from '../../core/scoring/report.js';
import { cr2Mean } from '../../core/scoring/cluster-robust.js';
import { clusteredMeanInterval, holm, mcnemarExact, meanInterval, pairedTTest } from '../../core/scoring/statistics.js';
import { formatScoreReport } from '../../core/scoring/format-report.js';

const base: ReportOptions = { runId: 'r1', scorer: 'exact', scorerVersion: 'v-abc', kind: 'pass_fail', epochs: 2 };

/** cells from { model: { vignette: [epoch 1 value, epoch 2 value, ...] } }; null = no score. */
function cells(table: Record<string, Record<string, (number | null)[]>>, group?: (v: string) => string | null): ScoreCell[] {
  const out: ScoreCell[] = [];
  for (const [model, rows] of Object.entries(table)) {
    for (const [vignetteId, values] of Object.entries(rows)) {
      values.forEach((value, e) => {
        if (value === null) return;
        const cell: ScoreCell = { model, vignetteId, epoch: e + 1, value, passed: value === 1 };
        if (group) cell.group = group(vignetteId);
        out.push(cell);
      });
    }
  }
  return out;
}

const two = {
  m1: { v1: [1, 1], v2: [1, 0], v3: [0, 0], v4: [1, 1] },
  m2: { v1: [1, 0], v2: [0, 0], v3: [0, 1], v4: [1, 1] },
};

async function* slowly(list: ScoreCell[]): AsyncGenerator<ScoreCell> {
  for (const c of list) yield c;
}

describe('buildScoreReport', () => {
  it('computes the leaderboard, consistency and the pair as by hand', async () => {
    const r = await buildScoreReport({ ...base, models: ['m1', 'm2'], pending: 3 }, cells(two));
    expect(r).toMatchObject({ run_id: 'r1', scorer: 'exact', scorer_version: 'v-abc', kind: 'pass_fail', epochs: 2, reducer: 'mean', by: null, pending: 3 });
    const [m1, m2] = r.models;
    expect(m1!.model).toBe('m1');
    expect(m1!.n).toBe(4);
    expect(m1!.mean).toBeCloseTo(0.625, 12);
    const iv = meanInterval([1, 0.5, 0, 1]);
    expect(m1!.stderr).toBeCloseTo(iv.stderr!, 12);
    // The t interval, cut to [0, 1].
    expect(m1!.ci95).toEqual([0, 1]);
    expect(iv.ci95![0]).toBeLessThan(0);
    expect(m1!.ci_method).toBe('t');
    expect(m1!.flip_rate).toBeCloseTo(0.25, 12);
    expect(m1!.unstable).toEqual(['v2']);
    expect(m1!.pass_at_k).toEqual({ '1': 0.625, '2': 0.75 });
    expect(m1!.pass_hat_k).toEqual({ '1': 0.625, '2': 0.5 });
    expect(m2!.mean).toBeCloseTo(0.5, 12);
    expect(m2!.flip_rate).toBeCloseTo(0.5, 12);
    expect(m2!.unstable).toEqual(['v1', 'v3']);

    expect(r.pairs).toHaveLength(1);
    const p = r.pairs[0]!;
    const t = pairedTTest([0.5, 0.5, -0.5, 0]);
    expect(p).toMatchObject({ a: 'm1', b: 'm2', n: 4, test: 'paired_t' });
    expect(p.diff).toBeCloseTo(0.125, 12);
    expect(p.p_value).toBe(t.p_value);
    expect(p.p_holm).toBe(t.p_value);
    expect(p.min_detectable_diff).toBe(t.min_detectable_diff);
    expect(p.distinguishable).toBe(false);
    // Four shared vignettes: too few to compare, whatever p says.
    expect(p.verdict).toBe('too_few');
    expect(r.warnings).toEqual(['1 pair shares fewer than 10 vignettes: too few vignettes to compare, no verdict given.']);
  });

  it('gives the same report whatever order the cells come in, and from an async stream', async () => {
    const list = cells(two);
    const straight = await buildScoreReport({ ...base, models: ['m1', 'm2'] }, list);
    const reversed = await buildScoreReport({ ...base, models: ['m1', 'm2'] }, slowly([...list].reverse()));
    // By epoch first, then model: the order a store might find fastest.
    const byEpoch = [...list].sort((x, y) => x.epoch - y.epoch || (x.model < y.model ? 1 : -1));
    const third = await buildScoreReport({ ...base, models: ['m1', 'm2'] }, byEpoch);
    expect(reversed.models).toEqual(straight.models.map((m) => ({ ...m, unstable: reversed.models.find((x) => x.model === m.model)!.unstable })));
    expect(reversed.pairs).toEqual(straight.pairs);
    expect(third.pairs).toEqual(straight.pairs);
    for (const m of reversed.models) expect([...m.unstable].sort()).toEqual([...straight.models.find((x) => x.model === m.model)!.unstable].sort());
  });

  it('orders models as asked, then as first seen, and applies Holm over every pair', async () => {
    const twelve = (values: number[]) => Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`v${i + 1}`, [values[i % 4]! - 0.01 * Math.floor(i / 4)]]));
    const r = await buildScoreReport(
      { ...base, epochs: 1, kind: 'graded', models: ['c', 'zz-not-run'] },
      cells({ a: twelve([0.9, 0.8, 0.7, 0.9]), b: twelve([0.1, 0.3, 0.2, 0.2]), c: twelve([0.5, 0.6, 0.4, 0.55]) }),
    );
    expect(r.models.map((m) => m.model)).toEqual(['c', 'a', 'b']);
    expect(r.pairs.map((p) => `${p.a}-${p.b}`)).toEqual(['c-a', 'c-b', 'a-b']);
    expect(r.pairs.map((p) => p.p_holm)).toEqual(holm(r.pairs.map((p) => p.p_value)));
    expect(r.pairs.every((p) => p.test === 'paired_t')).toBe(true);
    // Graded: no pass/fail figures.
    expect(r.models[0]!.flip_rate).toBeNull();
    expect(r.models[0]!.pass_at_k).toEqual({});
    const ab = r.pairs[2]!;
    expect(ab.diff).toBeCloseTo(0.625, 12);
    expect(ab.distinguishable).toBe(true);
    expect(ab.verdict).toBe('a_better');
  });

  it('calls a pair better only when its Holm-adjusted p is below 0.05, not when its own interval clears 0', async () => {
    // a is b + 0.05 ± 0.07 (raw p about 0.04 against b, c and d); c and d are b within 0.01. Each
    // of a's three intervals clears 0; Holm over six pairs keeps none below 0.05.
    const plus = (k: number) => (k % 2 === 0 ? 1 : -1);
    const twice = (k: number) => (k % 4 < 2 ? 1 : -1);
    const model = (f: (i: number) => number) => Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`v${i}`, [0.5 + f(i)]]));
    const r = await buildScoreReport(
      { ...base, epochs: 1, kind: 'graded' },
      cells({ a: model((i) => 0.05 + 0.07 * plus(i)), b: model(() => 0), c: model((i) => 0.01 * twice(i)), d: model((i) => -0.01 * twice(i + 1)) }),
    );
    const loose = r.pairs.filter((p) => p.ci95 !== null && (p.ci95[0] > 0 || p.ci95[1] < 0) && p.p_holm! >= 0.05);
    for (const p of r.pairs) expect(p.distinguishable).toBe(p.p_holm! < 0.05);
    expect(loose.length).toBeGreaterThan(0);
    for (const p of loose) expect(p.verdict).toBe('not_distinguishable');
  });

  it('reduces epochs by majority (median) and max', async () => {
    const table = { m: { v1: [1, 0, 0], v2: [1, 1, 0], v3: [0, 0, 0] } };
    const opts = { ...base, epochs: 3 };
    expect((await buildScoreReport({ ...opts, reducer: 'majority' }, cells(table))).models[0]!.mean).toBeCloseTo(1 / 3, 12);
    expect((await buildScoreReport({ ...opts, reducer: 'max' }, cells(table))).models[0]!.mean).toBeCloseTo(2 / 3, 12);
    expect((await buildScoreReport({ ...opts, reducer: 'mean' }, cells(table))).models[0]!.mean).toBeCloseTo(1 / 3, 12);
    const tie = await buildScoreReport({ ...base, reducer: 'majority' }, cells({ m: { v1: [1, 0], v2: [1, 1] } }));
    expect(tie.models[0]!.mean).toBeCloseTo(0.75, 12);
  });

  it('averages several judges into one epoch; the epoch passes when most of its verdicts do', async () => {
    const judged: ScoreCell[] = [
      { model: 'm', vignetteId: 'v1', epoch: 1, value: 1, passed: true },
      { model: 'm', vignetteId: 'v1', epoch: 1, value: 1, passed: true },
      { model: 'm', vignetteId: 'v1', epoch: 1, value: 0, passed: false },
      { model: 'm', vignetteId: 'v2', epoch: 1, value: 0, passed: false },
      { model: 'm', vignetteId: 'v2', epoch: 1, value: 1, passed: true },
    ];
    const r = await buildScoreReport({ ...base, epochs: 1 }, judged);
    // One pass rule: v1 passes (2 of 3), v2 does not (1 of 2 is no majority), in the mean as in pass@1.
    expect(r.models[0]!.mean).toBe(0.5);
    expect(r.models[0]!.pass_at_k).toEqual({ '1': 0.5 });
  });

  it('pairs only the vignettes both models answered, and uses the epochs each has', async () => {
    const r = await buildScoreReport(
      { ...base, epochs: 3, models: ['a', 'b'] },
      cells({
        a: { v1: [1, 1, 0], v2: [1, null, null], v3: [0, 0, 1], v4: [1, 1, 1] },
        b: { v1: [0, 0, 0], v3: [1, 1, null], v4: [1, 0, 1] },
      }),
    );
    const [a, b] = r.models;
    expect(a!.n).toBe(4);
    expect(b!.n).toBe(3);
    // pass@3 only over vignettes with three epochs; pass@1 over all.
    expect(Object.keys(a!.pass_at_k)).toEqual(['1', '2', '3']);
    expect(a!.pass_at_k['1']).toBeCloseTo((2 / 3 + 1 + 1 / 3 + 1) / 4, 12);
    expect(a!.pass_at_k['3']).toBeCloseTo(1, 12);
    // Flip rate only over vignettes with two or more epochs.
    expect(a!.flip_rate).toBeCloseTo((2 / 3 + 2 / 3 + 0) / 3, 12);
    expect(r.pairs[0]!.n).toBe(3);
    expect(r.pairs[0]!.diff).toBeCloseTo((2 / 3 + (1 / 3 - 1) + (1 - 2 / 3)) / 3, 12);
  });

  it('switches to exact McNemar for one epoch of a pass/fail scorer', async () => {
    const a: Record<string, number[]> = {};
    const b: Record<string, number[]> = {};
    // 7 vignettes only a passes, 2 only b passes, 5 both, 6 neither.
    const plan = [...Array(7).fill([1, 0]), ...Array(2).fill([0, 1]), ...Array(5).fill([1, 1]), ...Array(6).fill([0, 0])] as [number, number][];
    plan.forEach(([x, y], i) => {
      a[`v${i}`] = [x];
      b[`v${i}`] = [y];
    });
    const r = await buildScoreReport({ ...base, epochs: 1 }, cells({ a, b }));
    const p = r.pairs[0]!;
    expect(p.test).toBe('mcnemar_exact');
    expect(p.p_value).toBe(mcnemarExact(7, 2));
    expect(p.diff).toBeCloseTo(5 / 20, 12);
    expect(r.models[0]!.flip_rate).toBeNull();
    expect(r.models[0]!.epoch_noise_share).toBeNull();
  });

  it('with K = 1 pass/fail and `by`, the p comes from the clustered test its clustered interval comes from', async () => {
    const a: Record<string, number[]> = {};
    const b: Record<string, number[]> = {};
    // 24 vignettes in 12 topics: a passes 18, b 10.
    for (let i = 0; i < 24; i++) {
      a[`v${i}`] = [i % 4 === 3 ? 0 : 1];
      b[`v${i}`] = [i % 12 < 5 ? 1 : 0];
    }
    const topic = (v: string) => `t${Number(v.slice(1)) % 12}`;
    const r = await buildScoreReport({ ...base, epochs: 1, by: 'topic' }, cells({ a, b }, topic));
    const p = r.pairs[0]!;
    const d = Array.from({ length: 24 }, (_, i) => a[`v${i}`]![0]! - b[`v${i}`]![0]!);
    const groups = Array.from({ length: 24 }, (_, i) => i % 12);
    const t = pairedTTest(d, groups);
    expect(p).toMatchObject({ test: 'paired_t', ci_method: 'cr2' });
    expect(p.p_value).toBe(t.p_value);
    expect(p.ci95).toEqual(t.ci95);
    expect(p.p_value).not.toBe(mcnemarExact(11, 3));
  });

  it('gives a perfect model at K = 1 an interval strictly inside (0, 1], never the point [1, 1]', async () => {
    const perfect = Object.fromEntries(Array.from({ length: 24 }, (_, i) => [`v${i}`, [1]]));
    const r = await buildScoreReport({ ...base, epochs: 1 }, cells({ m: perfect }));
    const [lo, hi] = r.models[0]!.ci95!;
    expect(r.models[0]!.ci_method).toBe('wilson');
    expect(lo).toBeGreaterThan(0);
    expect(lo).toBeLessThan(1);
    expect(hi).toBe(1);
    expect(lo).toBeCloseTo(24 / (24 + 1.959963984540054 ** 2), 12);
  });

  it('with `by`, clusters the standard errors and slices the leaderboard by the key', async () => {
    const topic = (v: string) => (v === 'v5' ? null : Number(v.slice(1)) <= 2 ? 'dose' : 'triage');
    const table = {
      m1: { v1: [1, 1], v2: [1, 0], v3: [0, 0], v4: [1, 1], v5: [0, 1] },
      m2: { v1: [1, 0], v2: [0, 0], v3: [0, 1], v4: [1, 1], v5: [0, 0] },
    };
    const r = await buildScoreReport({ ...base, by: 'topic', models: ['m1', 'm2'] }, cells(table, topic));
    expect(r.by).toBe('topic');
    const xs = [1, 0.5, 0, 1, 0.5];
    const groups = [0, 0, 1, 1, 2];
    // Three clusters give under 3 degrees of freedom: no interval, no p, and the report says why.
    expect(clusteredMeanInterval(xs, groups).tooFewClusters).toBe(true);
    expect(r.models[0]).toMatchObject({ mean: 0.6, stderr: null, ci95: null, ci_method: 'cr2' });
    expect(r.warnings).toContain(
      'Clustering by "topic" rests on only 3 clusters (fewer than 10): too few independent clusters for a clustered interval (under 3 degrees of freedom, about four even clusters), so no interval, p or verdict is given. Report without --by, or by a key with more clusters.',
    );
    const d = [0.5, 0.5, -0.5, 0, 0.5];
    expect(pairedTTest(d, groups).tooFewClusters).toBe(true);
    expect(r.pairs[0]).toMatchObject({ stderr: null, ci95: null, p_value: null, p_holm: null });
    expect(r.slices!.map((s) => s.value)).toEqual(['(none)', 'dose', 'triage']);
    const dose = r.slices!.find((s) => s.value === 'dose')!;
    expect(dose.models.map((m) => [m.model, m.n, m.mean])).toEqual([
      ['m1', 2, 0.75],
      ['m2', 2, 0.25],
    ]);
    expect(dose.models[0]!.stderr).toBeCloseTo(meanInterval([1, 0.5]).stderr!, 12);
  });

  it('floors CR2 at the unclustered SE where one cluster holds most vignettes, and warns; with 12 even clusters, neither', async () => {
    // 30 vignettes: 16 in one cluster and 14 alone (15 clusters, 3.1 degrees of freedom), or in 15 pairs.
    const values = Array.from({ length: 30 }, (_, i) => [(i * 7) % 3 === 0 ? 0 : 1, i % 4 === 0 ? 0 : 1]);
    const table = { m1: Object.fromEntries(values.map((v, i) => [`v${i}`, v])) };
    const dominated = (v: string) => (Number(v.slice(1)) < 16 ? 'big' : v);
    const r = await buildScoreReport({ ...base, by: 'topic' }, cells(table, dominated));
    const xs = values.map(([a, b]) => (a! + b!) / 2);
    const labels = xs.map((_, i) => (i < 16 ? 0 : i));
    expect(cr2Mean(xs, labels).stderr).toBeLessThan(meanInterval(xs).stderr!);
    expect(clusteredMeanInterval(xs, labels).floored).toBe(true);
    expect(r.models[0]!.stderr).toBeCloseTo(meanInterval(xs).stderr!, 12);
    expect(r.warnings).toContain(
      'Clustering by "topic" rests on 15 clusters, one holding 53 % of the vignettes: the clustered intervals and p-values (CR2 with Bell-McCaffrey degrees of freedom, floored at the unclustered standard error) rest on few independent clusters; read them as rough.',
    );
    const even = await buildScoreReport({ ...base, by: 'topic' }, cells(table, (v) => `c${Math.floor(Number(v.slice(1)) / 2)}`));
    expect(even.warnings.filter((w) => w.startsWith('Clustering'))).toEqual([]);
    expect(even.models[0]!.stderr).toBeCloseTo(clusteredMeanInterval(xs, xs.map((_, i) => Math.floor(i / 2))).stderr!, 12);
  });

  it('gives a pair over too few clusters no verdict ("too few clusters to compare"), however far apart, and leaves it out of Holm', async () => {
    // 20 vignettes in two topics: a always passes, b always fails; unclustered this is p < 0.001.
    const ids = Array.from({ length: 20 }, (_, i) => `v${i}`);
    const table = { a: Object.fromEntries(ids.map((v) => [v, [1, 1]])), b: Object.fromEntries(ids.map((v, i) => [v, [i % 3 === 0 ? 1 : 0, 0]])) };
    const plain = await buildScoreReport(base, cells(table));
    expect(plain.pairs[0]).toMatchObject({ verdict: 'a_better' });
    const r = await buildScoreReport({ ...base, by: 'topic' }, cells(table, (v) => (Number(v.slice(1)) < 10 ? 'dose' : 'triage')));
    expect(r.pairs[0]).toMatchObject({ n: 20, verdict: 'too_few_clusters', distinguishable: false, p_value: null, p_holm: null, ci95: null });
    expect(r.models.map((m) => m.ci95)).toEqual([null, null]);
    expect(r.warnings.some((w) => w.startsWith('Clustering by "topic" rests on only 2 clusters (fewer than 10): too few independent clusters'))).toBe(true);
    expect(formatScoreReport(r).join('\n')).toMatch(/a − b .* too few clusters to compare/);
  });

  it('reports one model alone, one vignette, and all-equal scores with intervals that are never a point', async () => {
    const single = await buildScoreReport(base, cells({ m: { v1: [1, 1] } }));
    expect(single.models[0]).toMatchObject({ n: 1, mean: 1, stderr: null, ci_method: 'wilson' });
    expect(single.models[0]!.ci95![0]).toBeGreaterThan(0);
    expect(single.pairs).toEqual([]);
    const flat = await buildScoreReport(base, cells({ a: { v1: [1, 1], v2: [1, 1] }, b: { v1: [1, 1], v2: [1, 1] } }));
    expect(flat.models[0]).toMatchObject({ mean: 1, stderr: 0, epoch_noise_share: null, ci_method: 'wilson' });
    expect(flat.models[0]!.ci95![1]).toBe(1);
    expect(flat.models[0]!.ci95![0]).toBeLessThan(1);
    expect(flat.pairs[0]).toMatchObject({ diff: 0, p_value: 1, ci95: null, distinguishable: false, verdict: 'too_few' });
    const empty = await buildScoreReport(base, []);
    expect(empty.models).toEqual([]);
    expect(empty.pairs).toEqual([]);
  });

  it.each([
    [{ epoch: 0 }, /score cell 0 \(m, v1\): epoch 0 is not in 1\.\.2/],
    [{ epoch: 3 }, /epoch 3 is not in 1\.\.2/],
    [{ epoch: 1.5 }, /epoch 1\.5 is not in/],
    [{ value: 1.5 }, /value 1\.5 is not in \[0, 1\]/],
    [{ value: NaN }, /value NaN is not in \[0, 1\]/],
    [{ value: -0.1 }, /value -0\.1 is not in/],
    [{ model: '' }, /score cell 0: no model/],
  ])('refuses the absurd cell %j, naming it', async (bad, message) => {
    const cell = { model: 'm', vignetteId: 'v1', epoch: 1, value: 1, passed: true, ...bad } as ScoreCell;
    await expect(buildScoreReport(base, [cell])).rejects.toThrow(message);
  });

  it('refuses more verdicts on one response than a slot can count, naming the cell', async () => {
    const flood = Array.from({ length: 65_536 }, (): ScoreCell => ({ model: 'm', vignetteId: 'v1', epoch: 1, value: 1, passed: true }));
    await expect(buildScoreReport(base, flood)).rejects.toThrow(/score cell 65535 \(m, v1, epoch 1\): more than 65,535 verdicts/);
  });

  it('rejects with the error of the stream itself when the store read fails half-way, after a stall', async () => {
    async function* failing(): AsyncGenerator<ScoreCell[]> {
      yield cells(two).slice(0, 4);
      await new Promise((r) => setTimeout(r, 50));
      throw new Error('database is locked');
    }
    await expect(buildScoreReport(base, failing())).rejects.toThrow('database is locked');
  });

  it('stays small for a run with very many epochs and few vignettes', async () => {
    const before = process.memoryUsage().arrayBuffers;
    const r = await buildScoreReport({ ...base, epochs: 10_000 }, cells({ m: { v1: [1, 0, 1], v2: [0] } }));
    expect(r.models[0]!.n).toBe(2);
    expect(r.models[0]!.pass_at_k['3']).toBeCloseTo(1, 12);
    // 10,000 epochs x 2 vignettes x 12 bytes: well under a megabyte of slots, not 1024 vignettes' worth.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(20 * 1024 * 1024);
  });

  it.each([0, -1, 2.5, NaN, 70_000])('refuses epochs = %f', async (epochs) => {
    await expect(buildScoreReport({ ...base, epochs }, [])).rejects.toThrow(/epochs must be an integer in 1\.\.65535/);
  });

  it('hands the event loop back while it reads and reduces a large stream', async () => {
    let ticks = 0;
    let running = true;
    const ticker = (async () => {
      while (running) {
        await nextTurn();
        ticks++;
      }
    })();
    const K = 5;
    async function* many(): AsyncGenerator<ScoreCell> {
      for (let v = 0; v < 60_000; v++) {
        for (let e = 1; e <= K; e++) {
          for (const model of ['a', 'b']) yield { model, vignetteId: `v${v}`, epoch: e, value: (v * 7 + e) % 3 === 0 ? 1 : 0, passed: null };
        }
      }
    }
    const before = ticks;
    const r = await buildScoreReport({ ...base, epochs: K }, many());
    running = false;
    await ticker;
    expect(r.models.map((m) => m.n)).toEqual([60_000, 60_000]);
    // 600,000 cells cannot be read in one 10 ms slice: the ticker must have run in between.
    expect(ticks - before).toBeGreaterThan(2);
  });
});

describe('buildRunComparison', () => {
  it('pairs two runs by vignette id, per model both ran, as B − A', async () => {
    const a = cells({ m: { v1: [0], v2: [1], v3: [0], v4: [1] }, onlyA: { v1: [1] } });
    const b = cells({ m: { v4: [1], v3: [1], v2: [1], v1: [1], v9: [0] } });
    const c = await buildRunComparison(
      { runA: 'ra', runB: 'rb', scorer: 'exact', scorerVersionA: 'x1', scorerVersionB: 'x1', kind: 'pass_fail', epochsA: 1, epochsB: 1 },
      a,
      b,
    );
    expect(c).toMatchObject({ run_a: 'ra', run_b: 'rb', scorer: 'exact', scorer_version_a: 'x1', scorer_version_b: 'x1', reducer: 'mean' });
    expect(c.models_a.map((m) => m.model)).toEqual(['m', 'onlyA']);
    expect(c.models_b.map((m) => [m.model, m.n])).toEqual([['m', 5]]);
    expect(c.pairs).toHaveLength(1);
    const p = c.pairs[0]!;
    expect(p).toMatchObject({ a: 'rb:m', b: 'ra:m', n: 4, test: 'mcnemar_exact' });
    expect(p.diff).toBeCloseTo(0.5, 12);
    expect(p.p_value).toBe(mcnemarExact(2, 0));
  });

  it('uses the paired t with several epochs on either side', async () => {
    const a = cells({ m: { v1: [0, 1], v2: [1, 1], v3: [0, 0] } });
    const b = cells({ m: { v1: [1, 1, 1], v2: [1, 0, 1], v3: [0, 1, 0] } });
    const c = await buildRunComparison(
      { runA: 'ra', runB: 'rb', scorer: 's', scorerVersionA: 'x1', scorerVersionB: 'x2', kind: 'pass_fail', epochsA: 2, epochsB: 3 },
      a,
      b,
    );
    expect(c.pairs[0]!.test).toBe('paired_t');
    expect(c.pairs[0]!.diff).toBeCloseTo((0.5 + (2 / 3 - 1) + 1 / 3) / 3, 12);
  });
});
