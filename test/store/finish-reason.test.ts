/**
 * A record keeps why its answer ended, as the provider said it: an OpenAI-compatible host's
 * `length` for an answer cut at its cap, Anthropic's `max_tokens`, `stop` otherwise; stored with the
 * record, read back, and carried by responses.jsonl and the JSONL export.
 * Runs on: Node (tests).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { responsesPath } from '../../core/paths.js';
import { FakeProvider } from '../models/fake-provider.js';
import { useTempEngines } from '../helpers/temp-engine.js';
import { writeManifest } from '../helpers/temp.js';

let fake: FakeProvider;
beforeAll(async () => {
  fake = await new FakeProvider().start();
});
afterAll(async () => {
  delete process.env.FAKE_FINISH_KEY;
  await fake.stop();
});

describe("a record's finish reason", () => {
  const engines = useTempEngines('panoptes-finish-');

  it('is stored as the provider gave it, read back, and in every JSONL line', async () => {
    const catalog = join(engines.dir, 'catalog.json');
    writeFileSync(catalog, JSON.stringify({
      providers: {
        oa: { kind: 'openai', baseUrl: `${fake.url}/v1`, trainsOnData: false, apiKeyEnv: 'FAKE_FINISH_KEY' },
        an: { kind: 'anthropic', baseUrl: fake.url, trainsOnData: false, apiKeyEnv: 'FAKE_FINISH_KEY' },
      },
      models: {
        capped: { hosts: [{ provider: 'oa', model: 'f-capped', contextWindow: 8000 }] },
        claude: { hosts: [{ provider: 'an', model: 'f-claude', contextWindow: 8000 }] },
      },
    }));
    process.env.FAKE_FINISH_KEY = 'sk-test-finish-reason-0123456789';
    fake.always('f-capped', { kind: 'ok', text: 'cut sho', finishReason: 'length' });
    fake.always('f-claude', { kind: 'ok', text: 'done.', finishReason: 'max_tokens' });
    const engine = engines.open({ catalogPaths: [catalog] });
    const run = await engine.service.createRun({ manifestPath: writeManifest(engines.dir, 3), models: ['capped', 'claude'], epochs: 1 });
    const final = await engine.scheduler.runToCompletion(run.id);
    expect(final.status, final.error ?? '').toBe('done');

    const page = await engine.service.responses({ runId: run.id });
    expect(page.items).toHaveLength(6);
    const reasons = Object.fromEntries(page.items.map((r) => [`${r.model}/${r.vignetteId}`, r.finishReason]));
    expect(new Set(page.items.filter((r) => r.model === 'capped').map((r) => r.finishReason))).toEqual(new Set(['length']));
    expect(new Set(page.items.filter((r) => r.model === 'claude').map((r) => r.finishReason))).toEqual(new Set(['max_tokens']));

    const logLines = readFileSync(responsesPath(engine.dataDir, run.id), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logLines).toHaveLength(6);
    for (const line of logLines) expect(line.finish_reason).toBe(reasons[`${String(line.model)}/${String(line.vignette_id)}`]);

    const out = join(engines.dir, 'export.jsonl');
    await engine.service.exportRun({ runId: run.id, outPath: out, format: 'jsonl' });
    const exported = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(exported.map((l) => l.finish_reason).sort()).toEqual(['length', 'length', 'length', 'max_tokens', 'max_tokens', 'max_tokens']);
  });
});
