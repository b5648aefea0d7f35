/**
 * The router inside the engine: a sweep over an OpenAI-compatible fake server, the contract's
 * `metrics()` and `posture()` answering from the router, the prompt cache answering a repeated
 * sweep (marked cached in the records), `skipPromptCache` keeping everything out of the cache, and the
 * embedded hosted catalog loading.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../core/models/catalog.js';
import { examplesDir } from '../../core/paths.js';
import type { Engine } from '../../core/service/engine.js';
import { writeManifest } from '../helpers/temp.js';
import { useTempEngines } from '../helpers/temp-engine.js';
import { FakeProvider } from './fake-provider.js';
import { host, openaiProvider } from './helpers.js';

let fake: FakeProvider;
beforeEach(async () => {
  fake = await new FakeProvider().start();
});
afterEach(async () => {
  await fake.stop();
});
const tmp = useTempEngines();

function open(): Engine {
  const catalogPath = join(tmp.dir, 'fake-catalog.json');
  writeFileSync(
    catalogPath,
    JSON.stringify({
      providers: { fakeai: openaiProvider(fake.url), fakepub: openaiProvider(fake.url, { trainsOnData: true }) },
      models: { 'fake-gpt': { hosts: [host('fakeai', 'fake-gpt-1')] }, 'fake-pub': { hosts: [host('fakepub', 'fake-pub-1')] } },
    }),
  );
  return tmp.open({ catalogPaths: [catalogPath], tickMs: 20, callConcurrency: 4 });
}

function records(e: Engine, runId: string): Array<{ cached: boolean; host: string; usage: { input_tokens: number } }> {
  return readFileSync(join(e.dataDir, 'runs', runId, 'responses.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { cached: boolean; host: string; usage: { input_tokens: number } });
}

describe('the router in the engine', () => {
  it('runs a sweep through a provider, and serves metrics and posture through the contract', async () => {
    const e = open();
    const manifest = writeManifest(tmp.dir, 20);
    const run = await e.service.createRun({ manifestPath: manifest, models: ['fake-gpt'], epochs: 2 });
    expect(await e.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'done' });
    expect(fake.count('fake-gpt-1')).toBe(40);
    const recs = records(e, run.id);
    expect(recs).toHaveLength(40);
    expect(recs.every((r) => r.host === 'fakeai/fake-gpt-1' && !r.cached && r.usage.input_tokens === 11)).toBe(true);

    const m = await e.service.metrics({ model: 'fake-gpt' });
    expect(m.providers).toEqual([expect.objectContaining({ provider: 'fakeai', calls: 40, inputTokens: 440, outputTokens: 280, cacheHits: 0 })]);
    expect(m.hosts[0]!.p95LatencyMs).toBeGreaterThanOrEqual(m.hosts[0]!.p50LatencyMs);
    expect(m.hosts[0]!.costUsd).toBeCloseTo((440 * 1 + 280 * 2) / 1e6, 10);
    expect(m.recent).toHaveLength(40);
    await expect(e.service.metrics({ limit: 0 } as never)).rejects.toMatchObject({ code: 'invalid_input', where: 'limit' });

    const posture = await e.service.posture();
    const byModel = Object.fromEntries(posture.models.map((p) => [p.model, p]));
    expect(byModel['fake-gpt']).toMatchObject({ routable: true, privacySafeRoutable: true });
    expect(byModel['fake-pub']).toMatchObject({ routable: true, privacySafeRoutable: false });
    // The hosted models are in the catalog; without their keys they are not routable.
    expect(byModel['gpt-4o-mini']!.hosts[0]).toMatchObject({ state: 'no_key', reason: 'OPENAI_API_KEY is not set' });
  });

  it('answers a repeated sweep from the cache, marked cached; skipPromptCache bypasses it', async () => {
    const e = open();
    const manifest = writeManifest(tmp.dir, 10);
    const first = await e.service.createRun({ manifestPath: manifest, models: ['fake-gpt'], epochs: 1 });
    await e.scheduler.runToCompletion(first.id);
    const again = await e.service.createRun({ manifestPath: manifest, models: ['fake-gpt'], epochs: 1 });
    await e.scheduler.runToCompletion(again.id);
    expect(fake.count('fake-gpt-1')).toBe(10);
    expect(records(e, again.id).every((r) => r.cached)).toBe(true);
    // A new epoch is a new sample: not answered from epoch 1.
    const epoch2 = await e.service.createRun({ manifestPath: manifest, models: ['fake-gpt'], epochs: 2 });
    await e.scheduler.runToCompletion(epoch2.id);
    expect(fake.count('fake-gpt-1')).toBe(20);

    const fresh = writeManifest(tmp.dir, 10, 'fresh.jsonl');
    const skipPromptCache = await e.service.createRun({ manifestPath: fresh, models: ['fake-gpt'], epochs: 1, skipPromptCache: true });
    await e.scheduler.runToCompletion(skipPromptCache.id);
    expect(records(e, skipPromptCache.id).every((r) => !r.cached)).toBe(true);
    expect(fake.count('fake-gpt-1')).toBe(30);
    const m = await e.service.metrics();
    expect(m.providers[0]).toMatchObject({ calls: 30, cacheHits: 20 });
  });

  it('ships a valid hosted catalog: every provider names its key variable and its privacy terms', () => {
    const hosted = Catalog.load(join(examplesDir(), 'hosted-catalog.json'));
    expect(hosted.modelIds().length).toBeGreaterThanOrEqual(20);
    for (const [name, p] of Object.entries(hosted.data.providers)) {
      expect(p.apiKeyEnv, name).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(p.note, name).toBeTruthy();
    }
    for (const id of hosted.modelIds()) {
      for (const h of hosted.hosts(id)) {
        // GitHub Models' free tier takes 8,000 input tokens a request: the smallest window shipped.
        expect(h.contextWindow, h.id).toBeGreaterThanOrEqual(8000);
        expect(h.inputPerMTok, h.id).toBeTypeOf('number');
        expect(h.outputPerMTok, h.id).toBeTypeOf('number');
      }
    }
    // :free routes may train on prompts: never privacy-safe.
    expect(hosted.hosts('llama-3.3-70b').find((h) => h.model.endsWith(':free'))!.privacySafe).toBe(false);
  });
});
