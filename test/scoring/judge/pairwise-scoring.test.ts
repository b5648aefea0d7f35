/**
 * Pairwise judges in the scoring engine, with the embedded mock models (mock-strong answers a
 * vignette's target 80 % of the time, mock-weak 60 %) and mock-judge: against a baseline model of
 * the same run, scored live as the run lands its records (the baseline's answers landing after the
 * records they are compared with), every record exactly once and mock-strong's win rate above one
 * half; a record whose baseline's job is still running waits (nothing scored, nothing failed); a
 * baseline whose job failed or was cancelled makes "could not score" records that say why; a baseline
 * model the run does not have is refused naming the field; and the report says its means are win
 * rates against the baseline.
 */
import { describe, expect, it } from 'vitest';
import { formatScoreReport } from '../../../core/scoring/format-report.js';
import type { Engine } from '../../../core/service/engine.js';
import { writeMockCatalog, writeTargetManifest } from '../../helpers/temp.js';
import { useTempEngines } from '../../helpers/temp-engine.js';

const tmp = useTempEngines();

const PAIRWISE = { name: 'vs-weak', type: 'judge' as const, mode: 'pairwise' as const, baseline: 'mock-weak', judges: ['mock-judge'], rubric: 'Which answer is the right option?' };

/** Per scorer: stored rows, distinct (record, judge) pairs, failed rows, and the run's records. */
function rowsOf(e: Engine, runId: string, scorer: string) {
  return e.store.db
    .prepare(
      `SELECT COUNT(*) AS rows, COUNT(DISTINCT sc.seq || ':' || sc.judge) AS distinctRows, SUM(sc.failed) AS failed,
         (SELECT COUNT(*) FROM responses s JOIN jobs j ON j.id = s.job_id WHERE j.run_id = @runId) AS records
       FROM scores sc JOIN scorers s ON s.id = sc.scorer_id AND s.name = @scorer`,
    )
    .get({ runId, scorer }) as { rows: number; distinctRows: number; failed: number; records: number };
}

describe('pairwise judges against a model of the run', () => {
  it('scores live as the run lands, waiting for the baseline: every record once, the stronger model winning', async () => {
    const e = (tmp.open({ tickMs: 20 }));
    e.scoring.start();
    // One job at a time, mock-strong's first: all its records land before the baseline answers them.
    const run = await e.service.createRun({
      manifestPath: writeTargetManifest(tmp.dir, 60),
      models: ['mock-strong', 'mock-weak'],
      epochs: 2,
      concurrency: 1,
      scorers: { scorers: [PAIRWISE] },
    });
    expect(await e.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'done' });
    await e.scoring.finish(run.id);
    const status = await e.service.scoringStatus({ runId: run.id });
    expect(status.scorers.map((s) => [s.name, s.kind, s.done, s.failed, s.pending])).toEqual([['vs-weak', 'graded', 240, 0, 0]]);
    expect(rowsOf(e, run.id, 'vs-weak')).toEqual({ rows: 240, distinctRows: 240, failed: 0, records: 240 });

    const report = await e.service.report({ runId: run.id, scorer: 'vs-weak' });
    const mean = (model: string) => report.models.find((m) => m.model === model)!.mean;
    expect(mean('mock-strong')).toBeGreaterThan(0.5);
    // The baseline's own answers are compared with nothing: a tie each.
    expect(mean('mock-weak')).toBe(0.5);
    expect(report.pairwise).toEqual({ baseline: 'mock-weak' });
    expect(formatScoreReport(report).join('\n')).toMatch(/win rate against the baseline/);
    // Two judge calls (both orders) per record of mock-strong; none for the baseline's own.
    expect(status.judgeUsage.map((u) => [u.model, u.calls])).toEqual([['mock-judge', 240]]);
  });

  it('stores a record whose baseline job failed as could not score, with the reason', async () => {
    const catalog = writeMockCatalog(tmp.dir, { broken: { latencyMs: 1, errorRate: 1, errorKind: 'bad_request' } });
    const e = (tmp.open({ tickMs: 20, catalogPaths: [catalog] }));
    e.scoring.start();
    const run = await e.service.createRun({
      manifestPath: writeTargetManifest(tmp.dir, 10),
      models: ['mock-strong', 'broken'],
      epochs: 1,
      scorers: { scorers: [{ ...PAIRWISE, baseline: 'broken' }] },
    });
    expect(await e.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'failed' });
    await e.scoring.finish(run.id);
    const [s] = (await e.service.scoringStatus({ runId: run.id })).scorers;
    expect(s).toMatchObject({ done: 0, failed: 10, pending: 0 });
    const explanations = e.store.db.prepare(`SELECT explanation FROM scores WHERE failed = 1`).pluck().all() as string[];
    expect(explanations).toHaveLength(10);
    for (const x of explanations) expect(x).toMatch(/^could not score: the baseline "broken"'s job at epoch 1 ended \(failed\) without an answer to this vignette/);
  });

  it('holds the cursor before a record whose baseline job is still running, and scores it could-not-score once the run is cancelled', async () => {
    const catalog = writeMockCatalog(tmp.dir, { stuck: { latencyMs: 600_000 } });
    const e = (tmp.open({ tickMs: 20, catalogPaths: [catalog] }));
    const run = await e.service.createRun({
      manifestPath: writeTargetManifest(tmp.dir, 10),
      models: ['mock-strong', 'stuck'],
      epochs: 1,
      // mock-strong's job first; then the baseline's, whose calls do not return.
      concurrency: 1,
      scorers: { scorers: [{ ...PAIRWISE, baseline: 'stuck' }] },
    });
    const ended = e.scheduler.runToCompletion(run.id);
    while (e.store.queries.jobs(run.id).find((j) => j.model === 'mock-strong')?.status !== 'done') await new Promise((r) => setTimeout(r, 10));
    // Every record of mock-strong has landed; its baseline's job is still running: nothing is scored, nothing failed.
    await e.scoring.wake();
    expect((await e.service.scoringStatus({ runId: run.id })).scorers[0]).toMatchObject({ done: 0, failed: 0, pending: 10 });
    await e.service.cancelRun({ runId: run.id });
    expect(await ended).toMatchObject({ status: 'cancelled' });
    e.scoring.start();
    await e.scoring.finish(run.id);
    expect((await e.service.scoringStatus({ runId: run.id })).scorers[0]).toMatchObject({ done: 0, failed: 10, pending: 0 });
    const explanations = e.store.db.prepare(`SELECT explanation FROM scores WHERE failed = 1`).pluck().all() as string[];
    for (const x of explanations) expect(x).toMatch(/^could not score: the baseline "stuck"'s job at epoch 1 ended \(cancelled\) without an answer/);
  });

  it('refuses a baseline model the run does not have, naming the field, and stores nothing', async () => {
    const e = (tmp.open({ tickMs: 20 }));
    const manifestPath = writeTargetManifest(tmp.dir, 3);
    await expect(
      e.service.createRun({ manifestPath, models: ['mock-strong'], epochs: 1, scorers: { scorers: [{ name: 'exact', type: 'match' }, PAIRWISE] } }),
    ).rejects.toMatchObject({ code: 'invalid_input', where: 'scorers.1.baseline', message: expect.stringMatching(/"mock-weak" is not a model of the run/) });
    expect(await e.service.listRuns()).toEqual([]);
    const run = await e.service.createRun({ manifestPath, models: ['mock-strong'], epochs: 1 });
    await e.scheduler.runToCompletion(run.id);
    await expect(e.service.scoreRun({ runId: run.id, scorers: { scorers: [PAIRWISE] } })).rejects.toMatchObject({ where: 'scorers.0.baseline' });
    expect((await e.service.scoringStatus({ runId: run.id })).scorers).toEqual([]);
  });
});
