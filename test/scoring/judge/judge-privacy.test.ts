/**
 * Judges obey their run's privacy mode, through the real router: a run with privacy "off" is
 * judged by a judge whose only host trains on prompts, every call on that host; a strict run
 * refuses that judge when it is attached (naming the judge, attaching nothing), and if such a
 * judge is attached anyway (a stored scorer from before), every judge call is blocked by the
 * router and the records are stored as failed to score, none answered by the unsafe host.
 * Runs on: Node (tests).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CatalogData } from '../../../core/models/catalog.js';
import { JUDGE_PROFILE } from '../../../core/scoring/judge/llm-judge.js';
import type { Engine } from '../../../core/service/engine.js';
import { writeTargetManifest } from '../../helpers/temp.js';
import { useTempEngines } from '../../helpers/temp-engine.js';

const tmp = useTempEngines();

const VIGNETTES = 6;
const PUBLIC_JUDGE = { name: 'judged', type: 'judge' as const, judges: ['public-judge'], rubric: 'Is the answer the right option?' };

/** A judge whose one host trains on prompts (not privacy-safe). */
function publicJudgeCatalog(dir: string): string {
  const data: CatalogData = {
    providers: { 'public-test': { kind: 'mock', trainsOnData: true } },
    models: { 'public-judge': { hosts: [{ provider: 'public-test', model: 'public-judge', contextWindow: 100_000, options: { judgeNoise: 0 } }] } },
  };
  const path = join(dir, 'public-judge.json');
  writeFileSync(path, JSON.stringify(data));
  return path;
}

function open(): Engine {
  const engine = tmp.open({ tickMs: 20, catalogPaths: [publicJudgeCatalog(tmp.dir)] });
  engine.scoring.start();
  return engine;
}

/** Judge calls per provider, from the router's metrics. */
async function judgeCalls(e: Engine): Promise<Record<string, number>> {
  const m = await e.service.metrics({ profile: JUDGE_PROFILE, since: 0 });
  return Object.fromEntries(m.providers.map((p) => [p.provider, p.calls + p.cacheHits]));
}

describe("judges under their run's privacy mode", () => {
  it('lets a run with privacy "off" be judged on a host that trains on prompts', async () => {
    const e = open();
    const run = await e.service.createRun({
      manifestPath: writeTargetManifest(tmp.dir, VIGNETTES),
      models: ['mock-strong'],
      epochs: 1,
      privacy: 'off',
      scorers: { scorers: [PUBLIC_JUDGE] },
    });
    expect(await e.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'done' });
    await e.scoring.finish(run.id);
    const status = await e.service.scoringStatus({ runId: run.id });
    expect(status.scorers.map((s) => [s.name, s.done, s.failed])).toEqual([['judged', VIGNETTES, 0]]);
    expect(await judgeCalls(e)).toEqual({ 'public-test': VIGNETTES });
  });

  it('keeps a strict run strict: such a judge is refused, and its calls are blocked if it is attached anyway', async () => {
    const e = open();
    const manifestPath = writeTargetManifest(tmp.dir, VIGNETTES);
    await expect(
      e.service.createRun({ manifestPath, models: ['mock-strong'], epochs: 1, scorers: { scorers: [{ name: 'exact', type: 'match' }, PUBLIC_JUDGE] } }),
    ).rejects.toMatchObject({ code: 'invalid_input', where: 'scorers.1.judges.0' });
    expect(await e.service.listRuns()).toEqual([]);

    const run = await e.service.createRun({ manifestPath, models: ['mock-strong'], epochs: 1, privacy: 'strict' });
    expect(await e.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'done' });
    await expect(e.service.scoreRun({ runId: run.id, scorers: { scorers: [PUBLIC_JUDGE] } })).rejects.toMatchObject({
      code: 'invalid_input',
      where: 'scorers.0.judges.0',
    });
    expect((await e.service.scoringStatus({ runId: run.id })).scorers).toEqual([]);

    // Attached past the service's check, as a scorer stored before it would be: the router blocks every call.
    const built = e.scorerRegistry.buildAll({ scorers: [PUBLIC_JUDGE] })[0]!;
    e.scores.attach(run.id, [
      { version: built.scorer.version, name: built.scorer.name, kind: built.scorer.kind, layer: built.layer, judges: built.scorer.judges, definition: built.definition },
    ]);
    await e.scoring.finish(run.id);
    const status = await e.service.scoringStatus({ runId: run.id });
    expect(status.scorers.map((s) => [s.name, s.done, s.failed])).toEqual([['judged', 0, VIGNETTES]]);
    expect((await judgeCalls(e))['public-test'] ?? 0).toBe(0);
    const reasons = e.store.db.prepare(`SELECT DISTINCT explanation FROM scores WHERE failed = 1`).pluck().all() as string[];
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/privacy/i);
  });
});
