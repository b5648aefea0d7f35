/**
 * Prompt variants compared as arms (model, variant), paired by item: the report of cells from two
 * models x two variants against an independent implementation (scipy's paired t, statsmodels'
 * exact McNemar and Holm; scripts/variant-reference.py wrote the fixture), to 1e-9. Then what the
 * renaming must keep: unstable items back as vignette ids, a repeated (variant, item) left
 * unpaired and said so, a run of fewer than two variants reported by model.
 * Runs on: Node (tests).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildScoreReport, type ScoreCell } from '../../core/scoring/report.js';
import { VariantArms, type VignetteVariantRow } from '../../core/scoring/variant-arms.js';
import { casesOf } from '../helpers/fixture-cases.js';

interface Case {
  name: string;
  models: string[];
  variants: string[];
  epochs: number;
  vignettes: VignetteVariantRow[];
  cells: ScoreCell[];
  arms: { model: string; n: number; mean: number }[];
  pairs: { a: string; b: string; n: number; diff: number; stderr?: number; ci95?: [number, number]; p_value: number; p_holm: number; test: string }[];
}

const fixture = JSON.parse(readFileSync(new URL('./fixtures/variant-arms.json', import.meta.url), 'utf8')) as { cases: Case[] };

async function* pages(cells: readonly ScoreCell[], size = 97): AsyncGenerator<ScoreCell[]> {
  for (let i = 0; i < cells.length; i += size) yield cells.slice(i, i + size);
}

async function reportOf(c: { models: string[]; epochs: number; vignettes: VignetteVariantRow[]; cells: ScoreCell[] }) {
  const arms = await VariantArms.read([c.vignettes]);
  expect(arms).not.toBeNull();
  const report = await buildScoreReport(
    { runId: 'r', scorer: 's', scorerVersion: 'v', kind: 'pass_fail', epochs: c.epochs, models: arms!.order(c.models) },
    arms!.cells(pages(c.cells)),
  );
  return arms!.report(report);
}

const close = (actual: number | null | undefined, expected: number) => expect(Math.abs((actual ?? NaN) - expected)).toBeLessThan(1e-9);

describe('prompt variants as arms', () => {
  it.each(casesOf(fixture.cases, 'variant-arm'))('$name: every arm and pair equals scipy/statsmodels', async (c) => {
    const report = await reportOf(c);
    expect(report.variants).toEqual(c.variants);
    expect(report.models.map((m) => m.model)).toEqual(c.arms.map((a) => a.model));
    for (const [i, want] of casesOf(c.arms, `${c.name} arm`).entries()) {
      const got = report.models[i]!;
      expect(got.n).toBe(want.n);
      close(got.mean, want.mean);
      const [model, variant] = want.model.split(' · ');
      expect(got.arm).toEqual({ model, variant });
    }
    expect(report.pairs.map((p) => [p.a, p.b])).toEqual(c.pairs.map((p) => [p.a, p.b]));
    for (const [i, want] of casesOf(c.pairs, `${c.name} pair`).entries()) {
      const got = report.pairs[i]!;
      expect(got.test).toBe(want.test);
      expect(got.n).toBe(want.n);
      close(got.diff, want.diff);
      close(got.p_value, want.p_value);
      close(got.p_holm, want.p_holm);
      if (want.stderr !== undefined) close(got.stderr, want.stderr);
      if (want.ci95 !== undefined) {
        close(got.ci95?.[0], want.ci95[0]);
        close(got.ci95?.[1], want.ci95[1]);
      }
      expect(got.verdict).toBe(want.p_holm >= 0.05 ? 'not_distinguishable' : want.diff > 0 ? 'a_better' : 'b_better');
    }
  });

  it('lists unstable items by their vignette ids, and leaves a repeated (variant, item) unpaired, saying so', async () => {
    const vignettes: VignetteVariantRow[] = [];
    const cells: ScoreCell[] = [];
    for (let i = 1; i <= 12; i++) {
      for (const v of ['A', 'B']) {
        vignettes.push({ vignetteId: `${v}-${i}`, variant: v, item: `q${i}` });
        for (let e = 1; e <= 2; e++) {
          const passed = v === 'A' ? i % 3 !== 0 || e === 1 : i % 2 === 0;
          cells.push({ model: 'm', vignetteId: `${v}-${i}`, epoch: e, value: passed ? 1 : 0, passed });
        }
      }
    }
    vignettes.push({ vignetteId: 'B-again', variant: 'B', item: 'q1' });
    cells.push({ model: 'm', vignetteId: 'B-again', epoch: 1, value: 1, passed: true }, { model: 'm', vignetteId: 'B-again', epoch: 2, value: 1, passed: true });
    const report = await reportOf({ models: ['m'], epochs: 2, vignettes, cells });
    const a = report.models.find((m) => m.model === 'm · A')!;
    expect(a.unstable).toEqual(['A-3', 'A-6', 'A-9', 'A-12']);
    expect(report.models.find((m) => m.model === 'm · B')!.n).toBe(13);
    expect(report.pairs).toHaveLength(1);
    expect(report.pairs[0]!.n).toBe(12);
    expect(report.warnings[0]).toBe('vignette B-again repeats item "q1" of variant "B" (as B-1): it is left unpaired, under its own id.');
  });

  it('a run of one variant is no axis: read gives null', async () => {
    expect(await VariantArms.read([[{ vignetteId: 'a', variant: 'only', item: 'a' }], [{ vignetteId: 'b', variant: 'only', item: 'b' }]])).toBeNull();
    expect(await VariantArms.read([])).toBeNull();
  });
});
