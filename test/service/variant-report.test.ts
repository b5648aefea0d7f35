/**
 * Prompt variants through the contract on a real engine (real SQLite, the known-accuracy mocks): a
 * run whose vignettes name two variants is reported by arm (model, variant), every arm paired with
 * every other by item, in the report, its text, its HTML and the comparison of two runs; a run
 * without variants, or with only one, reports exactly as a run whose vignettes carry no metadata.
 * Runs on: Node (tests).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answersTarget } from '../../core/models/providers/known-accuracy.js';
import { formatRunComparison, formatScoreReport } from '../../core/scoring/format-report.js';
import type { ScoreReport } from '../../core/service/contract.js';
import type { Engine } from '../../core/service/engine.js';
import { useTempEngines } from '../helpers/temp-engine.js';

const tmp = useTempEngines();
const ITEMS = 30;
const EXACT = { scorers: [{ name: 'exact', type: 'match' as const }] };

/** Vignettes `<variant>:q<i>` of each variant over the same items; `variants` empty: no metadata at all. */
function manifest(name: string, variants: readonly string[]): string {
  const lines: string[] = [];
  for (const v of variants.length === 0 ? [null] : variants) {
    for (let i = 0; i < ITEMS; i++) {
      const id = v === null ? `q${i}` : variants.length === 1 ? `q${i}` : `${v}:q${i}`;
      const prompt = `${v === 'terse' ? 'One letter: ' : ''}Which option is right for question ${i}?`;
      lines.push(JSON.stringify({ id, prompt, target: 'ABCDE'[i % 5], ...(v === null ? {} : { metadata: { variant: v, item: `q${i}` } }) }));
    }
  }
  const path = join(tmp.dir, name);
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

async function scoredRun(e: Engine, path: string, epochs = 2): Promise<string> {
  const run = await e.service.createRun({ manifestPath: path, models: ['mock-strong', 'mock-weak'], epochs, scorers: EXACT });
  expect(await e.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'done' });
  await e.scoring.finish(run.id);
  return run.id;
}

function hitsMean(model: string, prefix: string, epochs: number, p: number): number {
  let sum = 0;
  for (let i = 0; i < ITEMS; i++) {
    let hits = 0;
    for (let ep = 1; ep <= epochs; ep++) if (answersTarget(model, `${prefix}q${i}`, ep, p)) hits++;
    sum += hits / epochs;
  }
  return sum / ITEMS;
}

describe('prompt variants in the report', () => {
  it('reports each (model, variant) arm, paired by item with every other, in JSON, text and comparison', async () => {
    const e = tmp.open({ tickMs: 20 });
    e.scoring.start();
    const runId = await scoredRun(e, manifest('variants.jsonl', ['plain', 'terse']));
    const report = await e.service.report({ runId });
    expect(report.variants).toEqual(['plain', 'terse']);
    expect(report.models.map((m) => [m.model, m.arm, m.n])).toEqual([
      ['mock-strong · plain', { model: 'mock-strong', variant: 'plain' }, ITEMS],
      ['mock-strong · terse', { model: 'mock-strong', variant: 'terse' }, ITEMS],
      ['mock-weak · plain', { model: 'mock-weak', variant: 'plain' }, ITEMS],
      ['mock-weak · terse', { model: 'mock-weak', variant: 'terse' }, ITEMS],
    ]);
    expect(report.models[0]!.mean).toBeCloseTo(hitsMean('mock-strong', 'plain:', 2, 0.8), 12);
    expect(report.models[3]!.mean).toBeCloseTo(hitsMean('mock-weak', 'terse:', 2, 0.6), 12);
    // Every arm against every other, on the items both answered: the paired t over 30 items, Holm across 6.
    expect(report.pairs.map((p) => `${p.a} − ${p.b}`)).toEqual([
      'mock-strong · plain − mock-strong · terse',
      'mock-strong · plain − mock-weak · plain',
      'mock-strong · plain − mock-weak · terse',
      'mock-strong · terse − mock-weak · plain',
      'mock-strong · terse − mock-weak · terse',
      'mock-weak · plain − mock-weak · terse',
    ]);
    for (const p of report.pairs) expect([p.n, p.test]).toEqual([ITEMS, 'paired_t']);
    const variantPair = report.pairs[0]!;
    expect(variantPair.diff).toBeCloseTo(report.models[0]!.mean - report.models[1]!.mean, 12);
    // Unstable vignettes are named by their own ids, not by item.
    for (const m of report.models) for (const id of m.unstable) expect(id.startsWith(`${m.arm!.variant}:`)).toBe(true);

    const text = formatScoreReport(report).join('\n');
    expect(text).toContain('Prompt variants plain, terse: each row is an arm');
    expect(text).toContain('mock-strong · plain − mock-strong · terse');

    const again = await scoredRun(e, manifest('variants-again.jsonl', ['plain', 'terse']), 1);
    const comparison = await e.service.compareRuns({ runA: runId, runB: again });
    expect(comparison.variants).toEqual(['plain', 'terse']);
    expect(comparison.pairs.map((p) => [p.a, p.b, p.n])).toEqual([
      [`${again}:mock-strong · plain`, `${runId}:mock-strong · plain`, ITEMS],
      [`${again}:mock-strong · terse`, `${runId}:mock-strong · terse`, ITEMS],
      [`${again}:mock-weak · plain`, `${runId}:mock-weak · plain`, ITEMS],
      [`${again}:mock-weak · terse`, `${runId}:mock-weak · terse`, ITEMS],
    ]);
    expect(formatRunComparison(comparison).join('\n')).toContain('Prompt variants plain, terse');
  });

  it('a run without variants, or with only one, reports exactly as before: no arms, the same JSON', async () => {
    const e = tmp.open({ tickMs: 20 });
    e.scoring.start();
    const plain = await e.service.report({ runId: await scoredRun(e, manifest('plain.jsonl', [])) });
    const single = await e.service.report({ runId: await scoredRun(e, manifest('single.jsonl', ['only'])) });
    // Records land in whatever order the scheduler runs them: a sum may differ in its last bit, and vignettes are listed as first seen.
    const strip = (r: ScoreReport) =>
      JSON.stringify({ ...r, run_id: 'x', models: r.models.map((m) => ({ ...m, unstable: [...m.unstable].sort() })) }, (_k, v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(12)) : v));
    expect(strip(single)).toBe(strip(plain));
    expect(Object.keys(plain)).not.toContain('variants');
    expect(plain.models.map((m) => m.model)).toEqual(['mock-strong', 'mock-weak']);
    for (const m of plain.models) expect(Object.keys(m)).not.toContain('arm');
    expect(plain.pairs.map((p) => [p.a, p.b])).toEqual([['mock-strong', 'mock-weak']]);
  });
});
