/**
 * The judges of a staged template's judge loop are billed to the run as a scoring judge's calls
 * are: each counted before it is made, its tokens added when it answers, taken back when it ends
 * in an error, and shown in the run's judge totals (`stats.judges`, `totalJudgeCostUsd`). A real
 * engine poses a one-stage template whose judge loop asks an LLM judge at a local HTTP provider
 * (which counts what it was asked); the stored usage is compared with the provider's count.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTempEngines } from '../helpers/temp-engine.js';
import { writeManifest } from '../helpers/temp.js';
import { FakeProvider } from '../models/fake-provider.js';
import { refereedTemplate } from './refereed-template.js';

let fake: FakeProvider;
beforeAll(async () => {
  fake = await new FakeProvider().start();
});
afterAll(async () => {
  await fake.stop();
});

/** A judge loop of two rounds whose judge always fails the answer: two answers and two judge calls a vignette. */
const TEMPLATE = refereedTemplate('referee');

function catalogFile(dir: string): string {
  const file = join(dir, 'catalog.json');
  const host = (model: string, inputPerMTok: number, outputPerMTok: number) => ({ hosts: [{ provider: 'fake', model, contextWindow: 32000, inputPerMTok, outputPerMTok }] });
  writeFileSync(file, JSON.stringify({
    providers: { fake: { kind: 'openai', baseUrl: `${fake.url}/v1`, trainsOnData: false, timeoutMs: 5000 } },
    models: { cand: host('cand-model', 1, 2), referee: host('judge-model', 3, 4) },
  }));
  return file;
}

describe("a staged template's judge loop in the billed-calls ledger", () => {
  const engines = useTempEngines('panoptes-template-judge-');

  it('counts every judge call the provider was asked, with its tokens and cost, in the run totals', async () => {
    fake.always('cand-model', { kind: 'ok', text: 'my answer', inputTokens: 10, outputTokens: 5 });
    fake.always('judge-model', { kind: 'ok', text: '{"reason": "not yet", "score": "fail"}', inputTokens: 20, outputTokens: 4 });
    const engine = engines.open({ catalogPaths: [catalogFile(engines.dir)] });
    const before = fake.count('judge-model');
    const run = await engine.service.createRun({ manifestPath: writeManifest(engines.dir, 5), models: ['cand'], epochs: 1, template: TEMPLATE, skipPromptCache: true });
    expect((await engine.runToEnd(run.id)).status).toBe('done');

    const asked = fake.count('judge-model') - before;
    expect(asked).toBe(5 * 2);
    const stats = await engine.service.stats({ runId: run.id });
    expect(stats.judges).toEqual([expect.objectContaining({ model: 'referee', calls: asked, inputTokens: 20 * asked, outputTokens: 4 * asked, cachedCalls: 0 })]);
    expect(stats.totalJudgeCostUsd).toBeCloseTo((20 * asked * 3 + 4 * asked * 4) / 1e6, 12);
    expect(stats.totalWithScoringUsd).toBeCloseTo(stats.totalEstCostUsd + stats.totalJudgeCostUsd, 12);
    // The sweep's own usage is the candidate's calls only: the judge's are not in the records.
    expect(stats.models).toEqual([expect.objectContaining({ model: 'cand', calls: 5, inputTokens: 5 * 2 * 10 })]);
    // The same figures in the scoring status the Stats view reads.
    const status = await engine.service.scoringStatus({ runId: run.id });
    expect(status.judgeUsage).toEqual([expect.objectContaining({ model: 'referee', calls: asked })]);
  });

  it('takes back a judge call that ended in an error: nothing was billed for it', async () => {
    fake.always('cand-model', { kind: 'ok', text: 'my answer', inputTokens: 10, outputTokens: 5 });
    fake.always('judge-model', { kind: 'ok', text: '{"reason": "fine", "score": "pass"}', inputTokens: 20, outputTokens: 4 });
    fake.next('judge-model', { kind: 'status', status: 400, body: { error: { message: 'bad request' } } });
    const engine = engines.open({ catalogPaths: [catalogFile(engines.dir)] });
    const before = fake.count('judge-model');
    const run = await engine.service.createRun({ manifestPath: writeManifest(engines.dir, 4), models: ['cand'], epochs: 1, template: TEMPLATE, skipPromptCache: true });
    await engine.runToEnd(run.id);

    const asked = fake.count('judge-model') - before;
    // One call refused (its vignette fails with it), the others passed on the first round.
    expect(asked).toBeGreaterThanOrEqual(2);
    const stats = await engine.service.stats({ runId: run.id });
    expect(stats.judges).toEqual([expect.objectContaining({ model: 'referee', calls: asked - 1, inputTokens: 20 * (asked - 1), outputTokens: 4 * (asked - 1) })]);
  });
});
