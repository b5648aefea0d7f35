/**
 * What a report says about its judges, end to end through the engine and its store: two judges'
 * Krippendorff alpha reaches the report; a judge that answers with no readable verdict (a real
 * HTTP host answering prose) is missing data, not a fail: the response is scored by the judge
 * that answered, the missing verdicts are counted and warned about, and a judge that never gives a
 * verdict leaves its responses not scored rather than failed; a pairwise judge's non-verdict is no loss.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScorerDefinition } from '../../../core/scoring/scoring-config.js';
import { FakeProvider } from '../../models/fake-provider.js';
import { host, openaiProvider } from '../../models/helpers.js';
import { writeTargetManifest } from '../../helpers/temp.js';
import { useTempEngines } from '../../helpers/temp-engine.js';

const tmp = useTempEngines();
let fake: FakeProvider;

beforeAll(async () => {
  fake = await new FakeProvider().start();
  // A judge host that answers every prompt with prose and no verdict.
  fake.always('mumbler', { kind: 'ok', text: 'I think the answer is quite good overall.' });
});
afterAll(async () => {
  await fake.stop();
});

const RUBRIC = 'Is the answer the right option?';

/** A run of the two embedded mocks over 16 vignettes judged by `scorers`, the mumbler among the judges, run to the end. */
async function judgedRun(name: string, scorers: ScorerDefinition[]) {
  const catalog = join(tmp.dir, `${name}.json`);
  writeFileSync(catalog, JSON.stringify({ providers: { fake: openaiProvider(fake.url) }, models: { mumbler: { hosts: [host('fake', 'mumbler')] } } }));
  const e = tmp.open({ tickMs: 20, catalogPaths: [catalog] });
  e.scoring.start();
  const run = await e.service.createRun({ manifestPath: writeTargetManifest(tmp.dir, 16), models: ['mock-strong', 'mock-weak'], epochs: 1, privacy: 'off', scorers: { scorers } });
  expect(await e.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'done' });
  return { e, run };
}

describe("a report's judges", () => {
  it('carries alpha, and counts a judge with no verdict as missing, never as a fail', async () => {
    const { e, run } = await judgedRun('mumbler', [
      { name: 'two', type: 'judge', judges: ['mock-judge', 'mock-judge-2'], rubric: RUBRIC },
      { name: 'solo', type: 'judge', judges: ['mock-judge'], rubric: RUBRIC },
      { name: 'half', type: 'judge', judges: ['mock-judge', 'mumbler'], rubric: RUBRIC },
      { name: 'mute', type: 'judge', judges: ['mumbler'], rubric: RUBRIC },
    ]);
    await e.scoring.finish(run.id);

    const two = await e.service.report({ runId: run.id, scorer: 'two' });
    expect(two.judges!.judges).toEqual(['mock-judge', 'mock-judge-2']);
    expect(two.judges!.alpha).not.toBeNull();
    expect(two.judges!.alpha!).toBeGreaterThan(0);
    expect(two.judges!.alpha!).toBeLessThanOrEqual(1);

    // The mumbler's verdicts are missing: `half` is `solo`, with every response still scored.
    const solo = await e.service.report({ runId: run.id, scorer: 'solo' });
    const half = await e.service.report({ runId: run.id, scorer: 'half' });
    expect(half.models.map((m) => [m.model, m.n, m.mean])).toEqual(solo.models.map((m) => [m.model, m.n, m.mean]));
    for (const m of half.models) expect(m).toMatchObject({ not_scored: 0, not_scored_share: 0, verdicts_missing: 16 });
    expect(half.warnings).toContain('mock-strong: 16 judge verdicts missing: those responses are scored by the judges that answered.');
    expect(half.judges!.alpha).toBeNull();

    // A judge that never gives a verdict scores nothing: no model is failed for it.
    const mute = await e.service.report({ runId: run.id, scorer: 'mute' });
    expect(mute.models).toEqual([]);
    expect(mute.pairs).toEqual([]);
    expect(mute.warnings).toContain('mock-strong: not one response scored (every judge failed or gave no verdict, or the scorer could not score them): left out.');
    // One count of what was not scored, the models left off the leaderboard included; a non-verdict is no scorer failure.
    const responses = (await e.service.scoringStatus({ runId: run.id })).scorers.find((s) => s.name === 'mute')!.done;
    expect(mute).toMatchObject({ not_scored: responses, not_scored_reason: null, failed: 0, failure: null });
    expect(half.not_scored).toBe(0);
  });

  it('counts a pairwise judge with no verdict as missing: no win rate of 0, no "better"', async () => {
    const { e, run } = await judgedRun('mumbler-pairwise', [
      { name: 'pair', type: 'judge', mode: 'pairwise', baseline: 'mock-weak', judges: ['mock-judge'], rubric: RUBRIC },
      { name: 'mute-pair', type: 'judge', mode: 'pairwise', baseline: 'mock-weak', judges: ['mumbler'], rubric: RUBRIC },
    ]);
    await e.scoring.finish(run.id);

    // A judge that gives verdicts puts mock-strong on the board against its baseline.
    const pair = await e.service.report({ runId: run.id, scorer: 'pair' });
    expect(pair.models.find((m) => m.model === 'mock-strong')).toMatchObject({ n: 16 });
    expect(pair.pairs).toHaveLength(1);

    // The mumbler's non-verdicts are not losses: mock-strong is left out, not scored 0.000 and beaten.
    const mute = await e.service.report({ runId: run.id, scorer: 'mute-pair' });
    expect(mute.models.map((m) => [m.model, m.role])).toEqual([['mock-weak', 'baseline']]);
    expect(mute.pairs).toEqual([]);
    expect(mute).toMatchObject({ not_scored: 16, failed: 0, failure: null });
    expect(mute.warnings).toContain('mock-strong: not one response scored (every judge failed or gave no verdict, or the scorer could not score them): left out.');
  });
});
