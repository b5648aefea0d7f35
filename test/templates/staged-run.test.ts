/**
 * A run through a staged template, on a real engine and the scripted mock provider: a three-stage
 * template fanning out over `["alpha","beta","gamma"]` makes 5 calls per record, keeps every stage's
 * answer with the record and counts every call's tokens in the run's stats; a judge loop on the last
 * stage passes on round 2; a template with a bad line is refused at creation and nothing is stored.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toJsonlLine } from '../../core/export.js';
import { useTempEngines } from '../helpers/temp-engine.js';
import { writeManifest } from '../helpers/temp.js';
import { CHAIN, scriptedCatalog } from './scripted-chain.js';

describe('a staged template run', () => {
  const engines = useTempEngines('panoptes-staged-');

  it('fans out over the JSON list: 5 calls per record, every stage kept, every call counted', async () => {
    const engine = engines.open({ catalogPaths: [scriptedCatalog(engines.dir)] });
    const manifestPath = writeManifest(engines.dir, 4);
    const run = await engine.service.createRun({ manifestPath, models: ['scripted'], epochs: 2, template: CHAIN });
    expect((await engine.runToEnd(run.id)).status).toBe('done');

    const page = await engine.service.responses({ runId: run.id, limit: 100 });
    expect(page.items).toHaveLength(8);
    const first = page.items.find((r) => r.vignetteId === 'v0' && r.epoch === 1)!;
    expect(first.response).toBe('summary of reviewed alpha\n\nreviewed beta\n\nreviewed gamma');

    const rows = engine.store.db
      .prepare(`SELECT s.stage, s.item, s.round, s.response, s.input_tokens AS input, s.output_tokens AS output FROM stage_answers s
                JOIN jobs j ON j.id = s.job_id WHERE j.run_id = ? ORDER BY s.job_id, s.vignette_idx, s.call_idx`)
      .all(run.id) as { stage: string; item: number | null; round: number; response: string; input: number; output: number }[];
    expect(rows).toHaveLength(8 * 5);
    expect(rows.slice(0, 5).map((r) => [r.stage, r.item, r.response])).toEqual([
      ['map', null, '["alpha","beta","gamma"]'],
      ['review', 0, 'reviewed alpha'],
      ['review', 1, 'reviewed beta'],
      ['review', 2, 'reviewed gamma'],
      ['synthesize', null, 'summary of reviewed alpha\n\nreviewed beta\n\nreviewed gamma'],
    ]);
    // The record's usage is its five calls'; the run's stats count them all.
    const stageInput = rows.reduce((n, r) => n + r.input, 0);
    const stageOutput = rows.reduce((n, r) => n + r.output, 0);
    const stats = await engine.service.stats({ runId: run.id });
    expect(stats.models[0]).toMatchObject({ model: 'scripted', calls: 8, inputTokens: stageInput, outputTokens: stageOutput });
    expect(page.items.reduce((n, r) => n + r.usage.inputTokens, 0)).toBe(stageInput);
    // The run's responses.jsonl and its export carry each record's calls, the same line from the landing and from the database.
    const logged = readFileSync(join(engine.dataDir, 'runs', run.id, 'responses.jsonl'), 'utf8').trim().split('\n');
    expect(logged).toEqual([...engine.store.queries.iterateResponses(run.id)].map(toJsonlLine));
    const line = JSON.parse(logged[0]!) as { stages: { stage: string; item: number | null; round: number; usage: { input_tokens: number } }[] };
    expect(line.stages.map((st) => [st.stage, st.item, st.round])).toEqual([['map', null, 1], ['review', 0, 1], ['review', 1, 1], ['review', 2, 1], ['synthesize', null, 1]]);
    // Five calls reached the provider per record: the router's metrics say so.
    const metrics = await engine.service.metrics({});
    expect(metrics.providers.find((p) => p.provider === 'script')!.calls).toBe(40);
  });

  it('runs a judge loop on the last stage: a hard fail is posed again with the failed check, and passes on round 2', async () => {
    const engine = engines.open({ catalogPaths: [scriptedCatalog(engines.dir)] });
    const manifestPath = writeManifest(engines.dir, 2);
    const template = `name: judged
stages:
  - name: answer
    prompt: "JUDGED {{vignette.prompt}}"
    judge:
      maxRounds: 3
      scorers:
        - { name: verdict-heading, type: sections, headings: [Verdict] }
`;
    const run = await engine.service.createRun({ manifestPath, models: ['scripted'], epochs: 1, template });
    expect((await engine.runToEnd(run.id)).status).toBe('done');
    const page = await engine.service.responses({ runId: run.id, limit: 10 });
    expect(page.items.map((r) => r.response)).toEqual(['## Verdict\nfixed on the second round', '## Verdict\nfixed on the second round']);
    const rows = engine.store.db
      .prepare(`SELECT s.round, s.response FROM stage_answers s JOIN jobs j ON j.id = s.job_id WHERE j.run_id = ? AND s.vignette_idx = 0 ORDER BY s.call_idx`)
      .all(run.id);
    expect(rows).toEqual([
      { round: 1, response: 'no heading at all' },
      { round: 2, response: '## Verdict\nfixed on the second round' },
    ]);
  });

  it('refuses a template with a bad line at creation, storing nothing', async () => {
    const engine = engines.open({ catalogPaths: [scriptedCatalog(engines.dir)] });
    const manifestPath = writeManifest(engines.dir, 1);
    await expect(engine.service.createRun({ manifestPath, models: ['scripted'], epochs: 1, template: CHAIN.replace('{{stages.review}}', '{{stages.later}}') })).rejects.toThrow(
      'template:9: stages.2.prompt: {{stages.later}}: unknown stage "later"',
    );
    expect(await engine.service.listRuns({})).toHaveLength(0);
  });
});

describe('the built-in templates on the embedded mock-scripted model', () => {
  const engines = useTempEngines('panoptes-builtin-');

  it.each(['repo_audit', 'design_doc', 'redteam', 'panel_debate'])('%s runs offline to the end, its judge loop passing on the first round', async (name) => {
    const engine = engines.open();
    const manifestPath = writeManifest(engines.dir, 2);
    const run = await engine.service.createRun({ manifestPath, models: ['mock-scripted'], epochs: 1, template: name });
    expect((await engine.runToEnd(run.id)).status).toBe('done');
    const rows = engine.store.db
      .prepare(`SELECT s.stage, s.round FROM stage_answers s JOIN jobs j ON j.id = s.job_id WHERE j.run_id = ? AND s.vignette_idx = 0 ORDER BY s.call_idx`)
      .all(run.id) as { stage: string; round: number }[];
    // A fan-out template: its list stage, three items, its last stage; the debate: three stages.
    expect(rows).toHaveLength(name === 'panel_debate' ? 3 : 5);
    expect(rows.every((r) => r.round === 1)).toBe(true);
  });
});
