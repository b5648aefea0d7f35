/**
 * Run again as a form: the draft of a finished run carries everything Run again would create
 * (manifest, models, epochs, options with the cache choice and sampling, name, the newest version
 * of each scorer) and creates nothing; created as it is, it is the run Run again makes. The
 * built-in mocks sampled at a temperature above 0 without a seed answer differently run to run
 * with the cache off, and the same with a seed, so an offline Compare can show a difference.
 * Runs on: Node (tests).
 */
import { describe, expect, it } from 'vitest';
import { useTempEngines } from '../helpers/temp-engine.js';
import { writeManifest, writeTargetManifest } from '../helpers/temp.js';
import type { Engine } from '../../core/service/engine.js';

const engines = useTempEngines('panoptes-again-');

async function answers(e: Engine, runId: string): Promise<string[]> {
  const page = await e.service.responses({ runId, limit: 1000 });
  return page.items.map((r) => `${r.model}/${r.vignetteId}/${r.epoch}: ${r.response}`).sort();
}

describe('the draft of Run again', () => {
  it('carries the run as Run again would create it, and creates nothing', async () => {
    const e = engines.open({ tickMs: 20 });
    const run = await e.service.createRun({
      manifestPath: writeTargetManifest(engines.dir, 4),
      models: ['mock-strong', 'mock-weak'],
      epochs: 2,
      concurrency: 3,
      privacy: 'fallback',
      skipPromptCache: true,
      sampling: { temperature: 0.7, maxTokens: 64, seed: 11 },
      name: 'baseline',
      scorers: { scorers: [{ name: 'exact', type: 'match' }] },
    });
    await e.runToEnd(run.id);
    await e.service.scoreRun({ runId: run.id, scorers: { scorers: [{ name: 'exact', type: 'match', severity: 'soft' }] } });
    const draft = await e.service.runDraft({ runId: run.id });
    expect(draft).toEqual({
      manifestPath: run.manifestPath,
      models: ['mock-strong', 'mock-weak'],
      epochs: 2,
      concurrency: 3,
      privacy: 'fallback',
      skipPromptCache: true,
      shareCacheAcrossEpochs: false,
      sampling: { temperature: 0.7, maxTokens: 64, seed: 11 },
      name: 'baseline',
      // The newest version of the name only.
      scorers: { scorers: [{ name: 'exact', type: 'match', severity: 'soft' }] },
    });
    expect((await e.service.listRuns()).map((r) => r.id)).toEqual([run.id]);
    const again = await e.service.createRun(draft);
    expect(again).toMatchObject({ name: 'baseline', epochs: 2, options: run.options });
    await expect(e.service.runDraft({ runId: 'r-nope' })).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('the built-in mocks, sampled', () => {
  const run = async (e: Engine, manifestPath: string, sampling: { temperature: number; seed?: number }) => {
    const created = await e.service.createRun({ manifestPath, models: ['mock-strong', 'mock-fast'], epochs: 2, skipPromptCache: true, sampling });
    await e.runToEnd(created.id);
    return answers(e, created.id);
  };

  it('answer differently run to run at temperature 1 without a seed, the cache off', async () => {
    const e = engines.open({ tickMs: 20 });
    const manifest = writeTargetManifest(engines.dir, 20);
    const [a, b] = [await run(e, manifest, { temperature: 1 }), await run(e, manifest, { temperature: 1 })];
    expect(a).toHaveLength(80);
    const differing = a.filter((line, i) => line !== b[i]).length;
    // mock-fast's free text always differs; mock-strong's hits and misses are fresh draws at p = 0.8.
    expect(differing).toBeGreaterThan(40);
    expect(a.filter((l) => l.startsWith('mock-strong')).some((l, i) => l !== b[i])).toBe(true);
  });

  it('answer the same in every run with a seed, and at temperature 0', async () => {
    const e = engines.open({ tickMs: 20 });
    const manifest = writeManifest(engines.dir, 10);
    expect(await run(e, manifest, { temperature: 1, seed: 7 })).toEqual(await run(e, manifest, { temperature: 1, seed: 7 }));
    expect(await run(e, manifest, { temperature: 0 })).toEqual(await run(e, manifest, { temperature: 0 }));
  });
});
