/**
 * The anytime-valid decision over stored runs of models with a known accuracy, through the service:
 * a clear comparison is decided early with the right winner, a null one names no winner, a close
 * one ends undecided; the same scores and seed decide the same, and the seed is the only thing that
 * moves the order.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeStoredRun } from '../../bench/stored-run.js';
import { formatDecision } from '../../core/scoring/format-decision.js';
import { useTempEngines } from '../helpers/temp-engine.js';

describe('panoptes decide (the service)', () => {
  const tmp = useTempEngines();

  async function scored(runId: string, models: { model: string; accuracy: number }[], vignettes = 300, epochs = 1) {
    const dataDir = join(tmp.dir, 'data');
    writeStoredRun(dataDir, { runId, vignettes, epochs, models });
    const e = tmp.open({ dataDir, tickMs: 20 });
    await e.service.scoreRun({ runId, scorers: { scorers: [{ name: 'exact', type: 'match' }] } });
    await e.scoring.finish(runId);
    return e;
  }

  it('decides 0.9 against 0.5 early, with the right winner and at most 40 % of the calls', async () => {
    const e = await scored('rclear', [{ model: 'sharp', accuracy: 0.9 }, { model: 'dull', accuracy: 0.5 }]);
    const r = await e.service.decide({ runId: 'rclear' });
    expect(r.pairs).toHaveLength(1);
    expect(r.pairs[0]).toMatchObject({ a: 'sharp', b: 'dull', status: 'decided', winner: 'sharp', open: false });
    expect(r.pairs[0]!.n % 10).toBe(0);
    expect(r.calls / r.calls_full).toBeLessThanOrEqual(0.4);
    expect(r.models.map((m) => m.calls_saved)).toEqual(r.models.map((m) => 300 - m.vignettes));
    expect(r.usd_saved).toBeGreaterThan(0);
    // Each call saved at what a call of the run cost, the prompt cache's answers priced too.
    const usage = (await e.service.stats({ runId: 'rclear' })).models;
    for (const m of r.models) {
      const u = usage.find((x) => x.model === m.model)!;
      expect(m.usd_saved).toBeCloseTo((m.calls_saved * (u.estCostUsd + u.savedCostUsd)) / u.calls, 12);
    }
    expect(formatDecision(r).join('\n')).toMatch(/^sharp\s+dull\s+sharp better\s+\d+\s+\[\+0\.\d{3}, \+0\.\d{3}\]$/m);
    // The same scores and seed: the same decision; another seed: another order, the same winner.
    expect(await e.service.decide({ runId: 'rclear' })).toEqual(r);
    const other = await e.service.decide({ runId: 'rclear', seed: 99 });
    expect(other.pairs[0]!.winner).toBe('sharp');
  });

  it('names no winner between equal models, and leaves a close pair undecided at the end of the manifest', async () => {
    const e = await scored('rnull', [
      { model: 'twin-a', accuracy: 0.7 },
      { model: 'twin-b', accuracy: 0.7 },
      { model: 'near', accuracy: 0.68 },
    ]);
    const r = await e.service.decide({ runId: 'rnull' });
    expect(r.alpha_per_pair).toBeCloseTo(0.05 / 3, 15);
    for (const p of r.pairs) {
      expect(p.status).toBe('undecided');
      expect(p.winner).toBeNull();
      expect(p.n).toBe(300);
      expect(p.interval[0]).toBeLessThan(0);
      expect(p.interval[1]).toBeGreaterThan(0);
    }
    expect(r.calls).toBe(r.calls_full);
  });

  it('stops an equivalent pair inside the margin', async () => {
    // Two models of the same accuracy (independent draws), three epochs: the interval closes inside ±0.2 before the manifest ends.
    const e = await scored('requiv', [{ model: 'same', accuracy: 0.7 }, { model: 'alike', accuracy: 0.7 }], 400, 3);
    const r = await e.service.decide({ runId: 'requiv', margin: 0.2 });
    expect(r.pairs[0]).toMatchObject({ status: 'equivalent', winner: null });
    expect(r.pairs[0]!.interval[0]).toBeGreaterThanOrEqual(-0.2);
    expect(r.pairs[0]!.interval[1]).toBeLessThanOrEqual(0.2);
    expect(r.pairs[0]!.n).toBeLessThan(400);
  });
});
