/**
 * Judges in the scoring engine: a run created with a judge scorer is judged as its records land,
 * by both mock judges, one verdict per (record, judge), the judges' calls made under the judge
 * profile apart from the sweep's and their usage stored per judge for the run; a scoring file naming an unknown judge is
 * refused with the field and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { JUDGE_PROFILE } from '../../../core/scoring/judge/llm-judge.js';
import { writeTargetManifest } from '../../helpers/temp.js';
import { useTempEngines } from '../../helpers/temp-engine.js';

const tmp = useTempEngines();

const JUDGED = { name: 'judged', type: 'judge' as const, judges: ['mock-judge', 'mock-judge-2'], rubric: 'Is the answer the right option?' };

describe('judge scorers in the engine', () => {
  it('judges each record as it lands, once per judge, with judge calls apart from the sweep', async () => {
    const e = (tmp.open({ tickMs: 20 }));
    e.scoring.start();
    const run = await e.service.createRun({
      manifestPath: writeTargetManifest(tmp.dir, 30),
      models: ['mock-strong', 'mock-weak'],
      epochs: 2,
      scorers: { scorers: [{ name: 'exact', type: 'match' }, JUDGED] },
    });
    expect(await e.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'done' });
    await e.scoring.finish(run.id);
    const status = await e.service.scoringStatus({ runId: run.id });
    expect(status.scorers.map((s) => [s.name, s.layer, s.kind, s.judges, s.done, s.failed])).toEqual([
      ['exact', 'rule', 'pass_fail', [], 120, 0],
      ['judged', 'judge', 'pass_fail', ['mock-judge', 'mock-judge-2'], 120, 0],
    ]);
    // One verdict per (record, judge); most agree with the exact match, not all.
    const rows = e.store.db
      .prepare(
        `SELECT sc.seq, sc.judge, sc.value, m.value AS exact FROM scores sc
         JOIN scorers s ON s.id = sc.scorer_id AND s.name = 'judged'
         JOIN scores m ON m.seq = sc.seq AND m.scorer_id = (SELECT id FROM scorers WHERE name = 'exact')`,
      )
      .all() as Array<{ seq: number; judge: number; value: number; exact: number }>;
    expect(rows).toHaveLength(240);
    expect(new Set(rows.map((r) => `${r.seq}:${r.judge}`)).size).toBe(240);
    const agree = rows.filter((r) => r.value === r.exact).length / rows.length;
    expect(agree).toBeGreaterThan(0.75);
    expect(agree).toBeLessThan(1);
    // 240 judge calls under the judge profile; the sweep's 120 under the default one.
    const judged = await e.service.metrics({ profile: JUDGE_PROFILE, since: 0 });
    const swept = await e.service.metrics({ profile: 'default', since: 0 });
    const calls = (m: typeof judged) => m.providers.reduce((n, p) => n + p.calls + p.cacheHits, 0);
    expect(calls(judged)).toBe(240);
    expect(calls(swept)).toBe(120);
    // The run's judge usage, stored with the scores and priced, apart from the sweep's own usage.
    const usage = status.judgeUsage;
    expect(usage.map((u) => [u.model, u.calls])).toEqual([
      ['mock-judge', 120],
      ['mock-judge-2', 120],
    ]);
    const tokens = judged.providers.reduce((n, p) => n + p.inputTokens, 0);
    expect(usage.reduce((n, u) => n + u.inputTokens + u.cachedInputTokens, 0)).toBe(tokens);
    expect(usage.every((u) => u.estCostUsd > 0)).toBe(true);
    expect((await e.service.stats({ runId: run.id })).models.map((m) => m.model)).toEqual(['mock-strong', 'mock-weak']);
  });

  it('refuses an unknown judge in a scoring file, naming the field', async () => {
    const e = (tmp.open({ tickMs: 20 }));
    const run = await e.service.createRun({ manifestPath: writeTargetManifest(tmp.dir, 3), models: ['mock-fast'], epochs: 1 });
    await e.scheduler.runToCompletion(run.id);
    await expect(e.service.scoreRun({ runId: run.id, scorers: { scorers: [{ ...JUDGED, judges: ['mock-judge', 'no-such-judge'] }] } })).rejects.toMatchObject({
      code: 'invalid_input',
      where: 'scorers.0.judges.1',
    });
    expect((await e.service.scoringStatus({ runId: run.id })).scorers).toEqual([]);
  });
});
