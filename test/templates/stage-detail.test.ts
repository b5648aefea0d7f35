/**
 * The side-by-side detail of a staged record: every call behind the answer, in order, each with the
 * prompt it was posed with (rebuilt from the template, the vignette and the answers before it), its
 * answer, tokens and time; a record without a template has none.
 */
import { describe, expect, it } from 'vitest';
import { useTempEngines } from '../helpers/temp-engine.js';
import { writeManifest } from '../helpers/temp.js';
import { CHAIN, scriptedCatalog } from './scripted-chain.js';


describe('stages in the side-by-side detail', () => {
  const engines = useTempEngines('panoptes-stage-detail-');

  it('lists each call with the prompt it was posed with and its answer', async () => {
    const engine = engines.open({ catalogPaths: [scriptedCatalog(engines.dir)] });
    const manifestPath = writeManifest(engines.dir, 2);
    const run = await engine.service.createRun({ manifestPath, models: ['scripted'], epochs: 1, template: CHAIN });
    expect((await engine.runToEnd(run.id)).status).toBe('done');
    const detail = await engine.service.scoreDetail({ runId: run.id, vignetteId: 'v1' });
    const stages = detail.responses[0]!.stages!;
    expect(stages.map((s) => [s.stage, s.item, s.round, s.prompt, s.response])).toEqual([
      ['map', null, 1, 'MAP: Question number 1: what is 1 + 1?', '["alpha","beta","gamma"]'],
      ['review', 0, 1, 'REVIEW alpha of Question number 1: what is 1 + 1?', 'reviewed alpha'],
      ['review', 1, 1, 'REVIEW beta of Question number 1: what is 1 + 1?', 'reviewed beta'],
      ['review', 2, 1, 'REVIEW gamma of Question number 1: what is 1 + 1?', 'reviewed gamma'],
      ['synthesize', null, 1, 'SYNTH: reviewed alpha\n\nreviewed beta\n\nreviewed gamma', 'summary of reviewed alpha\n\nreviewed beta\n\nreviewed gamma'],
    ]);
    expect(stages.every((s) => s.inputTokens > 0 && s.outputTokens > 0 && s.latencyMs >= 0)).toBe(true);
    expect(detail.responses[0]!.response).toBe(stages.at(-1)!.response);
  });

  it('has no stages for a record made without a template', async () => {
    const engine = engines.open({ catalogPaths: [scriptedCatalog(engines.dir)] });
    const run = await engine.service.createRun({ manifestPath: writeManifest(engines.dir, 1), models: ['scripted'], epochs: 1 });
    expect((await engine.runToEnd(run.id)).status).toBe('done');
    const detail = await engine.service.scoreDetail({ runId: run.id, vignetteId: 'v0' });
    expect(detail.responses[0]!.stages).toBeUndefined();
  });
});
