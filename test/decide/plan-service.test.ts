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
    expect(plan.notes).toContain('judges are not counted: only a pilot run tells what they cost per record');
    expect(plan.notes.some((n) => n.startsWith('tokens and dollars unknown'))).toBe(true);
    expect(plan.designs.every((d) => d.cost_usd === null)).toBe(true);
    await expect(e.service.plan({ models: ['a', 'b'], accuracy: [0.8, 0.7, 0.6], delta: 0.1 })).rejects.toThrow('accuracy: 3 values for 2 models');
    await expect(e.service.plan({ models: ['a', 'b'], accuracy: [0.99, 0.5], flipRate: 0.5, delta: 0.1 })).rejects.toThrow(/flip rate of 0.5 is impossible/);
    await expect(e.service.plan({ models: ['a', 'b'], delta: 0.1 })).rejects.toThrow(/give each model's guessed accuracy/);
  });
});
