/**
 * A run posed until decided, live, through the engine, on mock models of known accuracy: a clear
 * comparison stops early with the right winner and makes only the calls its decision needed (the
 * losing model out of contention gets no more), and decides exactly as `decide` replays a full
 * sweep of the same manifest in the same order; equal models are posed the whole manifest and
 * no winner is named; the run's settings are refused where they cannot work, naming the field.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CatalogData } from '../../core/models/catalog.js';
import { formatScoreReport } from '../../core/scoring/format-report.js';
import { writeMockCatalog, writeTargetManifest } from '../helpers/temp.js';
import { useTempEngines } from '../helpers/temp-engine.js';

const SCORERS = { scorers: [{ name: 'exact', type: 'match' as const }] };

describe('run --until-decided (the engine)', () => {
  const tmp = useTempEngines();

  function engine() {
    const catalog = writeMockCatalog(tmp.dir, { sharp: { latencyMs: 0, accuracy: 0.95 }, dull: { latencyMs: 0, accuracy: 0.3 }, twin: { latencyMs: 0, accuracy: 0.7 }, twin2: { latencyMs: 0, accuracy: 0.7 } });
    return tmp.open({ catalogPaths: [catalog], tickMs: 20 });
  }

  function recordsPerModel(e: ReturnType<typeof engine>, runId: string): Record<string, number> {
    const rows = e.store.db
      .prepare<[string], { model: string; n: number }>(`SELECT j.model, COUNT(*) AS n FROM responses r JOIN jobs j ON j.id = r.job_id WHERE j.run_id = ? GROUP BY j.model`)
      .all(runId);
    return Object.fromEntries(rows.map((r) => [r.model, r.n]));
  }

  it('stops a clear comparison early, calls only what the decision needed, and decides as the replay of a full sweep', async () => {
    const e = engine();
    const manifestPath = writeTargetManifest(tmp.dir, 300);
    const run = await e.service.createRun({ manifestPath, models: ['sharp', 'dull'], epochs: 2, scorers: SCORERS, untilDecided: { orderSeed: 7, batch: 10 } });
    expect(run.options.untilDecided).toEqual({ alpha: 0.05, margin: 0, orderSeed: 7, batch: 10 });
    const final = await e.runToEnd(run.id);
    expect(final.status).toBe('done');

    const live = await e.service.decide({ runId: run.id });
    expect(live.posed_until_decided).toBe(true);
    expect(live.pairs[0]).toMatchObject({ a: 'sharp', b: 'dull', status: 'decided', winner: 'sharp' });
    const n = live.pairs[0]!.n;
    expect(n % 10).toBe(0);
    expect(n).toBeLessThan(300);
    // Each model was posed exactly the vignettes up to the decision, every epoch, each once.
    expect(recordsPerModel(e, run.id)).toEqual({ sharp: n * 2, dull: n * 2 });
    expect(live.calls).toBe(n * 2 * 2);
    expect(live.calls_full).toBe(300 * 2 * 2);

    // Its report: the anytime-valid decision, not the fixed-n pair table; --json carries the same.
    const report = await e.service.report({ runId: run.id });
    expect(report.pairs).toEqual([]);
    expect(report.anytime).toEqual(live);
    const text = formatScoreReport(report).join('\n');
    expect(text).toContain('Posed until decided: the pairs are those of the anytime-valid confidence sequences');
    expect(text).toMatch(new RegExp(`^sharp\\s+dull\\s+sharp better\\s+${n}\\s+\\[\\+\\d\\.\\d{3}, \\+\\d\\.\\d{3}\\]$`, 'm'));
    expect(text).toContain(`posed until decided: ${n * 4} of the full sweep's 1200 calls`);
    expect(text).not.toContain('Pairs, on the vignettes both answered');

    // The full sweep of the same manifest, replayed in the same order: the same decision at the same n.
    const full = await e.service.createRun({ manifestPath, models: ['sharp', 'dull'], epochs: 2, scorers: SCORERS });
    await e.runToEnd(full.id);
    const replay = await e.service.decide({ runId: full.id, seed: 7, batch: 10 });
    expect(replay.pairs).toEqual(live.pairs);
    expect(replay.models.map((m) => m.calls)).toEqual(live.models.map((m) => m.calls));
    // A full sweep's report keeps its fixed-n pairs.
    const fullReport = await e.service.report({ runId: full.id });
    expect(fullReport.anytime).toBeUndefined();
    expect(fullReport.pairs).toHaveLength(1);
  });

  it('keeps a model in contention while one of its pairs is open, and drops the one out of it', async () => {
    const e = engine();
    const manifestPath = writeTargetManifest(tmp.dir, 120);
    const run = await e.service.createRun({ manifestPath, models: ['twin', 'twin2', 'dull'], epochs: 1, scorers: SCORERS, untilDecided: { batch: 10 } });
    await e.runToEnd(run.id);
    const r = await e.service.decide({ runId: run.id });
    const twins = r.pairs.find((p) => p.a === 'twin' && p.b === 'twin2')!;
    // Equal models: no winner, posed the whole manifest.
    expect(twins).toMatchObject({ status: 'undecided', winner: null, n: 120 });
    const counts = recordsPerModel(e, run.id);
    expect(counts.twin).toBe(120);
    expect(counts.twin2).toBe(120);
    // dull is beaten by both twins before the end: it is posed no more after its last pair closed.
    const dullPairs = r.pairs.filter((p) => p.a === 'dull' || p.b === 'dull');
    const last = Math.max(...dullPairs.map((p) => p.n));
    expect(dullPairs.map((p) => p.status)).toEqual(['decided', 'decided']);
    expect(last).toBeLessThan(120);
    expect(counts.dull).toBe(last);
    expect(counts.dull).toBe(r.models.find((m) => m.model === 'dull')!.vignettes);
  });

  it('drops a model whose job failed for good: the others are not posed the whole manifest for its sake', async () => {
    // A host that refuses every call as unauthorized, on a provider of its own (a 401 benches the whole provider).
    const models = writeMockCatalog(tmp.dir, { sharp: { latencyMs: 0, accuracy: 0.95 }, dull: { latencyMs: 0, accuracy: 0.3 } }, 'models.json');
    const catalog = JSON.parse(readFileSync(writeMockCatalog(tmp.dir, { locked: { latencyMs: 0, errorRate: 1, errorKind: 'auth' } }, 'locked.json'), 'utf8')) as CatalogData;
    catalog.providers = { lockedhost: catalog.providers.mocktest! };
    catalog.models.locked!.hosts[0]!.provider = 'lockedhost';
    const locked = join(tmp.dir, 'locked.json');
    writeFileSync(locked, JSON.stringify(catalog));
    const e = tmp.open({ catalogPaths: [models, locked], tickMs: 20 });
    const manifestPath = writeTargetManifest(tmp.dir, 300);
    const run = await e.service.createRun({ manifestPath, models: ['sharp', 'dull', 'locked'], epochs: 1, scorers: SCORERS, untilDecided: { orderSeed: 7, batch: 10 } });
    const final = await e.runToEnd(run.id);
    const detail = await e.service.getRun({ runId: run.id });
    expect(detail.jobs.find((j) => j.model === 'locked')!.status).toBe('failed');
    expect(final.status).not.toBe('running');
    const r = await e.service.decide({ runId: run.id });
    const decided = r.pairs.find((p) => p.a === 'sharp' && p.b === 'dull')!;
    expect(decided).toMatchObject({ status: 'decided', winner: 'sharp', open: false });
    expect(decided.n).toBeLessThan(300);
    // locked answered nothing: its pairs end undecided with no vignette, and hold no one back.
    const lockedPairs = r.pairs.filter((x) => x.a === 'locked' || x.b === 'locked');
    expect(lockedPairs).toHaveLength(2);
    for (const p of lockedPairs) expect(p).toMatchObject({ status: 'undecided', n: 0, open: false });
    const counts = recordsPerModel(e, run.id);
    expect(counts).toEqual({ sharp: decided.n, dull: decided.n });
    expect(r.models.find((m) => m.model === 'sharp')!.vignettes).toBe(decided.n);
  });

  it('stops at its budget of calls: no batch opens that would pass it, the open pairs undecided, and the replay stops there too', async () => {
    const e = engine();
    const manifestPath = writeTargetManifest(tmp.dir, 200);
    // Equal models never decide: only the budget stops them. 2 models × 10 vignettes × 2 epochs = 40 calls a batch.
    const run = await e.service.createRun({ manifestPath, models: ['twin', 'twin2'], epochs: 2, scorers: SCORERS, untilDecided: { batch: 10, maxCalls: 130 } });
    expect(run.options.untilDecided).toMatchObject({ maxCalls: 130 });
    expect((await e.runToEnd(run.id)).status).toBe('done');
    // Three batches (120 calls) fit; a fourth would make 160.
    expect(recordsPerModel(e, run.id)).toEqual({ twin: 60, twin2: 60 });
    const live = await e.service.decide({ runId: run.id });
    expect(live).toMatchObject({ calls: 120, max_calls: 130, budget_spent: true });
    expect(live.pairs[0]).toMatchObject({ status: 'undecided', n: 30 });
    const text = formatScoreReport(await e.service.report({ runId: run.id })).join('\n');
    expect(text).toContain('stopped by the budget: the next batch would have passed 130 calls; the pairs still open are undecided');

    // A full sweep replayed under the same budget stops at the same batch; without one it goes on.
    const full = await e.service.createRun({ manifestPath, models: ['twin', 'twin2'], epochs: 2, scorers: SCORERS });
    await e.runToEnd(full.id);
    const replay = await e.service.decide({ runId: full.id, batch: 10, maxCalls: 130 });
    expect(replay).toMatchObject({ calls: 120, budget_spent: true, pairs: live.pairs });
    const unbounded = await e.service.decide({ runId: full.id, batch: 10 });
    expect(unbounded).toMatchObject({ max_calls: null, budget_spent: false });
    expect(unbounded.calls).toBeGreaterThan(120);
  });

  it('drops a model that answers none of a batch, its job still running: live and replay agree', async () => {
    // Every call of `broken` is refused as a bad request: each vignette is given up at once, and its
    // job fails only at its end, after the live loop has moved on.
    const catalog = writeMockCatalog(tmp.dir, { sharp: { latencyMs: 0, accuracy: 0.95 }, dull: { latencyMs: 0, accuracy: 0.3 }, broken: { latencyMs: 0, errorRate: 1, errorKind: 'bad_request' } }, 'broken.json');
    const e = tmp.open({ catalogPaths: [catalog], tickMs: 20 });
    const manifestPath = writeTargetManifest(tmp.dir, 300);
    const run = await e.service.createRun({ manifestPath, models: ['sharp', 'dull', 'broken'], epochs: 1, scorers: SCORERS, untilDecided: { orderSeed: 7, batch: 10 }, endWithFailures: 'done' });
    await e.runToEnd(run.id);
    const r = await e.service.decide({ runId: run.id });
    // broken was posed the first batch only, answered none of it, and its pairs stopped there.
    const gaveUp = e.store.db.prepare<[string], { n: number }>(`SELECT COUNT(*) AS n FROM vignette_failures f JOIN jobs j ON j.id = f.job_id WHERE j.run_id = ? AND j.model = 'broken'`).get(run.id);
    expect(gaveUp?.n).toBe(10);
    expect(r.models.find((m) => m.model === 'broken')).toMatchObject({ vignettes: 10 });
    const brokenPairs = r.pairs.filter((x) => x.a === 'broken' || x.b === 'broken');
    expect(brokenPairs).toHaveLength(2);
    for (const p of brokenPairs) expect(p).toMatchObject({ status: 'undecided', n: 0, open: false });
    const decided = r.pairs.find((p) => p.a === 'sharp' && p.b === 'dull')!;
    expect(decided).toMatchObject({ status: 'decided', winner: 'sharp' });
    // The replay says what the live run did: each model posed what the decision says.
    expect(recordsPerModel(e, run.id)).toEqual({ sharp: decided.n, dull: decided.n });
  });

  it('refuses what cannot be decided, naming the field, and creates nothing', async () => {
    const e = engine();
    const manifestPath = writeTargetManifest(tmp.dir, 20);
    await expect(e.service.createRun({ manifestPath, models: ['sharp'], epochs: 1, scorers: SCORERS, untilDecided: {} })).rejects.toThrow(/models.*at least two models/);
    await expect(e.service.createRun({ manifestPath, models: ['sharp', 'dull'], epochs: 1, untilDecided: {} })).rejects.toThrow(/scorers.*needs scorers/);
    await expect(e.service.createRun({ manifestPath, models: ['sharp', 'dull'], epochs: 1, scorers: SCORERS, untilDecided: { scorer: 'nope' } })).rejects.toThrow(/untilDecided\.scorer.*no scorer "nope"/);
    await expect(e.service.createRun({ manifestPath, models: ['sharp', 'dull'], epochs: 40, scorers: SCORERS, untilDecided: {} })).rejects.toThrow(/epochs.*more than 64/);
    await expect(e.service.createRun({ manifestPath, models: ['sharp', 'dull'], epochs: 2, scorers: SCORERS, untilDecided: { batch: 10, maxCalls: 39 } })).rejects.toThrow(
      /untilDecided\.maxCalls.*a budget of 39 calls is less than the first batch \(2 models × 10 vignettes × 2 epochs = 40\)/,
    );
    expect(await e.service.listRuns()).toEqual([]);
  });
});
