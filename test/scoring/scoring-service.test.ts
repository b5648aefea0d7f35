/**
 * Scoring through the contract on a real engine (real SQLite in a temp dir, the mock models with a
 * known accuracy): a run created with scorers is scored as its records land; a finished run is
 * re-scored without calling any model; an unchanged scorer is a no-op, a changed one a new version
 * beside the old; bad scoring files change nothing; `scoring` events are published.
 */
import { describe, expect, it } from 'vitest';
import { answersTarget } from '../../core/models/providers/known-accuracy.js';
import type { ControlEvent } from '../../core/service/contract.js';
import type { Engine } from '../../core/service/engine.js';
import { writeTargetManifest } from '../helpers/temp.js';
import { useTempEngines } from '../helpers/temp-engine.js';

const tmp = useTempEngines();

function open(): Engine {
  return tmp.open({ tickMs: 20 });
}

const EXACT = { scorers: [{ name: 'exact', type: 'match' as const }] };

/** How many of (model, vignette, epoch) the known-accuracy mock answers with the target. */
function expectedHits(model: string, n: number, epochs: number, p: number): number {
  let hits = 0;
  for (let e = 1; e <= epochs; e++) for (let i = 0; i < n; i++) if (answersTarget(model, `q${i}`, e, p)) hits += 1;
  return hits;
}

describe('scoring a run', () => {
  it('scores each record as it lands when the run is created with scorers', async () => {
    const e = open();
    const events: ControlEvent[] = [];
    e.service.subscribe((ev) => events.push(ev));
    e.scoring.start();
    const manifest = writeTargetManifest(tmp.dir, 40);
    const run = await e.service.createRun({
      manifestPath: manifest,
      models: ['mock-strong', 'mock-weak'],
      epochs: 2,
      scorers: { scorers: [{ name: 'exact', type: 'match' }, { name: 'short', type: 'words', max: 3, severity: 'soft' }] },
    });
    expect(await e.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'done' });
    await e.scoring.finish(run.id);
    const status = await e.service.scoringStatus({ runId: run.id });
    expect(status.scorers.map((s) => [s.name, s.layer, s.kind, s.done, s.pending, s.failed])).toEqual([
      ['exact', 'rule', 'pass_fail', 160, 0, 0],
      ['short', 'rule', 'pass_fail', 160, 0, 0],
    ]);
    e.events.flush();
    expect(events.some((ev) => ev.type === 'scoring' && ev.status.runId === run.id)).toBe(true);

    // The scores are the ground truth of the known-accuracy models.
    const exact = e.store.db
      .prepare(`SELECT j.model, SUM(sc.value) AS hits, COUNT(*) AS n FROM scores sc JOIN scorers s ON s.id = sc.scorer_id AND s.name = 'exact'
                JOIN responses r ON r.seq = sc.seq JOIN jobs j ON j.id = r.job_id WHERE j.run_id = ? GROUP BY j.model ORDER BY j.model`)
      .all(run.id);
    expect(exact).toEqual([
      { model: 'mock-strong', hits: expectedHits('mock-strong', 40, 2, 0.8), n: 80 },
      { model: 'mock-weak', hits: expectedHits('mock-weak', 40, 2, 0.6), n: 80 },
    ]);
  });

  it('re-scores a finished run without calling any model; unchanged is a no-op, a change is a new version beside the old', async () => {
    const e = open();
    const manifest = writeTargetManifest(tmp.dir, 30);
    const run = await e.service.createRun({ manifestPath: manifest, models: ['mock-strong'], epochs: 3 });
    await e.scheduler.runToCompletion(run.id);
    const calls = (await e.service.stats({ runId: run.id })).totalCalls;

    const first = await e.service.scoreRun({ runId: run.id, scorers: EXACT });
    expect(first.scorers).toEqual([expect.objectContaining({ name: 'exact', done: 0, pending: 90 })]);
    await e.scoring.finish(run.id);
    const scored = await e.service.scoringStatus({ runId: run.id });
    expect(scored.scorers[0]).toMatchObject({ done: 90, pending: 0 });

    // Again, unchanged (key order aside): nothing new.
    const again = await e.service.scoreRun({ runId: run.id, scorers: { scorers: [{ type: 'match', name: 'exact' }] } });
    expect(again.scorers).toHaveLength(1);
    expect(again.scorers[0]).toMatchObject({ version: scored.scorers[0]!.version, done: 90, pending: 0 });

    // Changed: a new version beside the old.
    const changed = await e.service.scoreRun({ runId: run.id, scorers: { scorers: [{ name: 'exact', type: 'match', severity: 'soft' }] } });
    await e.scoring.finish(run.id);
    const both = await e.service.scoringStatus({ runId: run.id });
    expect(both.scorers.map((s) => s.version)).toEqual([scored.scorers[0]!.version, changed.scorers[1]!.version]);
    expect(both.scorers.map((s) => s.done)).toEqual([90, 90]);
    expect(new Set(both.scorers.map((s) => s.version)).size).toBe(2);

    const rows = e.store.db.prepare(`SELECT COUNT(*) AS n FROM scores`).get() as { n: number };
    expect(rows.n).toBe(180);
    expect((await e.service.stats({ runId: run.id })).totalCalls).toBe(calls);
  });

  it('gives records that failed to score another chance, counting each record once', async () => {
    const e = open();
    const run = await e.service.createRun({ manifestPath: writeTargetManifest(tmp.dir, 30), models: ['mock-strong'], epochs: 3 });
    await e.scheduler.runToCompletion(run.id);
    // Fails every epoch of one vignette early in the run, so the second chance rewinds past records already scored.
    const flaky = { scorers: [{ name: 'flaky', type: 'code' as const, code: `function score(i) { if (i.vignetteId === 'q3') throw new Error('no verdict'); return 1; }` }] };
    await e.service.scoreRun({ runId: run.id, scorers: flaky });
    await e.scoring.finish(run.id);
    expect((await e.service.scoringStatus({ runId: run.id })).scorers[0]).toMatchObject({ done: 87, failed: 3, pending: 0 });

    await e.service.scoreRun({ runId: run.id, scorers: flaky });
    await e.scoring.finish(run.id);
    expect((await e.service.scoringStatus({ runId: run.id })).scorers[0]).toMatchObject({ done: 87, failed: 3, pending: 0 });
    const rows = e.store.db.prepare(`SELECT failed, COUNT(*) AS n FROM scores GROUP BY failed ORDER BY failed`).all();
    expect(rows).toEqual([{ failed: 0, n: 87 }, { failed: 1, n: 3 }]);
  });

  it('refuses a bad scoring file or an unknown run, changing nothing', async () => {
    const e = open();
    const manifest = writeTargetManifest(tmp.dir, 3);
    await expect(
      e.service.createRun({ manifestPath: manifest, models: ['mock-strong'], epochs: 1, scorers: { scorers: [{ name: 'r', type: 'regex', pattern: '[' }] } as never }),
    ).rejects.toMatchObject({ code: 'invalid_input', where: 'scorers.scorers.0.pattern' });
    await expect(
      e.service.createRun({ manifestPath: manifest, models: ['mock-strong'], epochs: 1, scorers: { scorers: [{ name: 'j', type: 'json', schema: { type: 7 } }] } }),
    ).rejects.toMatchObject({ code: 'invalid_input', where: 'scorers.0.schema' });
    expect(await e.service.listRuns()).toEqual([]);
    await expect(e.service.scoreRun({ runId: 'nope', scorers: EXACT })).rejects.toMatchObject({ code: 'not_found' });
    const run = await e.service.createRun({ manifestPath: manifest, models: ['mock-strong'], epochs: 1 });
    await expect(e.service.scoreRun({ runId: run.id, scorers: { scorers: [] } })).rejects.toMatchObject({ code: 'invalid_input' });
    expect((await e.service.scoringStatus({ runId: run.id })).scorers).toEqual([]);
  });
});
