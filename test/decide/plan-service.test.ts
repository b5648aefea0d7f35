/**
 * The plan through the service: from a scored pilot run (its per-vignette epoch scores, tokens and
 * pacing) and from guesses, with the manifest's size bounding the designs and bad input refused.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeStoredRun } from '../../bench/stored-run.js';
import { millerVignettes } from '../../core/scoring/power.js';
import { useTempEngines } from '../helpers/temp-engine.js';
import { writeManifest } from '../helpers/temp.js';

describe('panoptes plan (the service)', () => {
  const tmp = useTempEngines();

  it('plans from a pilot: its variances, its tokens at the catalog prices, its latency under the pacing', async () => {
    const dataDir = join(tmp.dir, 'data');
    writeStoredRun(dataDir, { runId: 'rpilot', vignettes: 300, epochs: 3, models: [{ model: 'mock-strong', accuracy: 0.8 }, { model: 'mock-weak', accuracy: 0.6 }] });
    const e = tmp.open({ dataDir, tickMs: 20 });
    await e.service.scoreRun({ runId: 'rpilot', scorers: { scorers: [{ name: 'exact', type: 'match' }] } });
    await e.scoring.finish('rpilot');
    const plan = await e.service.plan({ fromRun: 'rpilot', delta: 0.1 });
    expect(plan.source).toBe('pilot run rpilot (scorer exact, 3 epochs, 300 vignettes)');
    expect(plan.models).toEqual(['mock-strong', 'mock-weak']);
    // The known-accuracy mocks draw every (vignette, epoch) alike: all the variance is within vignettes, 0.8·0.2 + 0.6·0.4.
    const [pair] = plan.pairs;
    expect(pair!.within).toBeGreaterThan(0.35);
    expect(pair!.within).toBeLessThan(0.45);
    expect(pair!.between).toBeLessThan(0.03);
    const k3 = plan.designs.find((d) => d.epochs === 3)!;
    expect(k3.vignettes).toBe(Math.max(2, Math.ceil(millerVignettes(pair!, 3, { delta: 0.1, alpha: 0.05, power: 0.8, pairs: 1 }) - 1e-9)));
    expect(k3.calls).toBe(k3.vignettes * 3 * 2);
    expect(k3.cost_usd).toBeGreaterThan(0);
    expect(plan.designs[0]!.vignettes).toBeGreaterThan(plan.designs[3]!.vignettes);
    expect(plan.manifest_vignettes).toBe(300);
    expect(plan.pace).toHaveLength(1);
    expect(plan.pace[0]).toMatchObject({ provider: 'mock', basis: expect.stringMatching(/^8 in flight \/ \d+\.\d{3} s latency/) as unknown });
    expect(k3.wall_seconds).toBeCloseTo(k3.calls / plan.pace[0]!.callsPerSecond, 6);
    expect(plan.designs.filter((d) => d.cheapest)).toHaveLength(plan.too_small ? 0 : 1);

    const small = await e.service.plan({ fromRun: 'rpilot', delta: 0.02, manifestPath: writeManifest(tmp.dir, 40) });
    expect(small.manifest_vignettes).toBe(40);
    expect(small.too_small).toBe(true);
    expect(small.notes.at(-1)).toMatch(/^the manifest is too small to detect 0\.02/);
    await expect(e.service.plan({ fromRun: 'rpilot', delta: 0.1, models: ['mock-strong', 'mock-fast'] })).rejects.toThrow('models: pilot run rpilot did not run mock-fast');
    await expect(e.service.plan({ fromRun: 'rpilot', delta: 0.1, scorer: 'nope' })).rejects.toThrow(/has no scorer "nope"/);
  });

  it('plans from guesses, with Bonferroni over every pair, and refuses impossible ones', async () => {
    const e = tmp.open();
    const plan = await e.service.plan({ models: ['mock-strong', 'mock-weak', 'mock-fast'], accuracy: [0.8, 0.7, 0.6], flipRate: 0.1, correlation: 0.4, delta: 0.05 });
    expect(plan.pairs.map((p) => `${p.a}-${p.b}`)).toEqual(['mock-strong-mock-weak', 'mock-strong-mock-fast', 'mock-weak-mock-fast']);
    expect(plan.alpha_per_pair).toBeCloseTo(0.05 / 3, 12);
    expect(plan.manifest_vignettes).toBeNull();
    expect(plan.designs.every((d) => d.feasible)).toBe(true);
    expect(plan.notes).toContain('judges are not counted: give the judge models (judges) to count their calls, or plan from a pilot run');
    expect(plan.notes.some((n) => n.startsWith('tokens and dollars unknown'))).toBe(true);
    expect(plan.designs.every((d) => d.cost_usd === null)).toBe(true);
    await expect(e.service.plan({ models: ['mock-strong', 'mock-weak'], accuracy: [0.8, 0.7, 0.6], delta: 0.1 })).rejects.toThrow('accuracy: 3 values for 2 models');
    await expect(e.service.plan({ models: ['mock-strong', 'mock-weak'], accuracy: [0.99, 0.5], flipRate: 0.5, delta: 0.1 })).rejects.toThrow(/flip rate of 0.5 is impossible/);
    await expect(e.service.plan({ models: ['mock-strong', 'mock-weak'], delta: 0.1 })).rejects.toThrow(/give each model's guessed accuracy/);
    await expect(e.service.plan({ models: ['mock-strong', 'nosuch'], accuracy: [0.8, 0.7], delta: 0.1 })).rejects.toThrow(/^models: unknown model "nosuch"; did you mean/);
    await expect(e.service.plan({ models: ['mock-strong', 'mock-strong'], accuracy: [0.8, 0.7], delta: 0.1 })).rejects.toThrow('models: "mock-strong" is named twice');
    await expect(e.service.plan({ models: ['mock-strong', 'mock-weak'], accuracy: [0.8, 0.7], delta: 0.1, judges: ['nosuchjudge'] })).rejects.toThrow(/^judges: unknown model "nosuchjudge"/);
  });

  it('plans from guesses with the judges named: their calls counted, their dollars from their history here', async () => {
    const dataDir = join(tmp.dir, 'judged');
    writeStoredRun(dataDir, { runId: 'rhist', vignettes: 20, epochs: 1, models: [{ model: 'mock-strong', accuracy: 0.8 }, { model: 'mock-weak', accuracy: 0.6 }] });
    const e = tmp.open({ dataDir, tickMs: 20 });
    e.scoring.start();
    await e.service.scoreRun({ runId: 'rhist', scorers: { scorers: [{ name: 'j', type: 'judge', judges: ['mock-judge'], rubric: 'Is it right?' }] } });
    await e.scoring.finish('rhist');
    const judgeHistory = (await e.service.stats({})).judges.find((j) => j.model === 'mock-judge')!;
    expect(judgeHistory.calls).toBe(40);
    const guesses = { models: ['mock-strong', 'mock-weak'], accuracy: [0.8, 0.6], delta: 0.1 };
    const bare = await e.service.plan(guesses);
    const judged = await e.service.plan({ ...guesses, judges: ['mock-judge'] });
    for (const [i, d] of judged.designs.entries()) {
      const b = bare.designs[i]!;
      // One judge call per record, its dollars the history's mean call at the catalog's price.
      expect(d.judge_calls).toBe(d.calls);
      expect(d.vignettes).toBe(b.vignettes);
      const perCall = (judgeHistory.inputTokens + judgeHistory.cachedInputTokens + judgeHistory.outputTokens + judgeHistory.cachedOutputTokens) / judgeHistory.calls;
      expect(d.tokens! - b.tokens!).toBeCloseTo(d.calls * perCall, 6);
      expect(d.cost_usd!).toBeGreaterThan(b.cost_usd!);
    }
    expect(judged.notes.some((n) => n.startsWith('judges are not counted'))).toBe(false);
    // A judge with no history: its calls counted, its dollars unknown, and said.
    const unknown = await e.service.plan({ ...guesses, judges: ['mock-judge', 'mock-judge-2'] });
    expect(unknown.designs[0]!.judge_calls).toBe(2 * unknown.designs[0]!.calls);
    expect(unknown.designs.every((d) => d.cost_usd === null)).toBe(true);
    expect(unknown.notes).toContain('judge tokens and dollars unknown: no history has calls of mock-judge-2 (their calls are counted)');
    await expect(e.service.plan({ fromRun: 'rhist', delta: 0.1, judges: ['mock-judge'] })).rejects.toThrow(/judges: a pilot run's judges are its own/);
  });
});
