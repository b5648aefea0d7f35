/**
 * A provider's answer out of bounds fails its call with an error naming the host and the field,
 * and lands nothing: absurd token counts, a latency of 1e300 ms, a response over
 * PANOPTES_MAX_RESPONSE_BYTES. The fake model client (the only fake: store, scheduler and worker
 * are real) answers one vignette absurdly and the rest well; the run ends failed, naming that
 * vignette's failure, with every other record stored and exportable.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelClient, ModelRequest, ModelResponse } from '../../core/models/model-client.js';
import { initTelemetry } from '../../core/telemetry.js';
import { writeManifest, writeMockCatalog } from '../helpers/temp.js';
import { useTempEngines } from '../helpers/temp-engine.js';

initTelemetry({ defaultLevel: 'silent' });

/** Answers vignette v2 with `bad` laid over a good answer, every other vignette well. */
class OneAbsurdAnswer implements ModelClient {
  calls = 0;
  constructor(private readonly bad: Partial<ModelResponse>) {}

  serves(): boolean {
    return true;
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    if (request.vignette?.id === 'v2') this.calls += 1;
    const good: ModelResponse = { text: 'four', usage: { inputTokens: 3, outputTokens: 1 }, host: 'fake/bounds', cached: false, latencyMs: 2 };
    return request.vignette?.id === 'v2' ? { ...good, ...this.bad } : good;
  }
}

describe("bounds on a provider's answer", () => {
  const tmp = useTempEngines();
  beforeEach(() => {
    process.env.PANOPTES_MAX_RESPONSE_BYTES = '1000';
  });
  afterEach(() => {
    delete process.env.PANOPTES_MAX_RESPONSE_BYTES;
  });

  it.each([
    ['2^53-1 output tokens', { usage: { inputTokens: 3, outputTokens: Number.MAX_SAFE_INTEGER } }, /fake\/bounds answered out of bounds: usage\.outputTokens 9007199254740991: must be at most 100000000/],
    ['negative input tokens', { usage: { inputTokens: -4, outputTokens: 1 } }, /usage\.inputTokens -4: must not be negative/],
    ['a latency of 1e300 ms', { latencyMs: 1e300 }, /latencyMs 1e\+300: must be at most 86400000 ms/],
    ['an infinite latency', { latencyMs: Infinity }, /latencyMs Infinity: /],
    ['a response over PANOPTES_MAX_RESPONSE_BYTES', { text: 'x'.repeat(1001) }, /response: 1001 bytes, over the 1000-byte limit \(PANOPTES_MAX_RESPONSE_BYTES\)/],
  ])('fails the call on %s, not retried, and lands the rest', async (_name, bad, message) => {
    const client = new OneAbsurdAnswer(bad);
    const engine = tmp.open({ catalogPaths: [writeMockCatalog(tmp.dir, { m: {} })], modelClient: client, tickMs: 20 });
    const run = await engine.service.createRun({ manifestPath: writeManifest(tmp.dir, 4), models: ['m'], epochs: 1 });
    const final = await engine.scheduler.runToCompletion(run.id);
    expect(final.status).toBe('failed');
    expect(final.error).toMatch(message);
    expect(client.calls).toBe(1);
    const failures = engine.store.queries.vignetteFailures(run.id, 10);
    expect(failures.map((f) => [f.vignetteId, f.code])).toEqual([['v2', 'server_error']]);
    expect(failures[0]!.message).toMatch(message);
    expect(engine.store.queries.runResults(run.id).map((r) => r.vignetteId).sort()).toEqual(['v0', 'v1', 'v3']);
    const exported = await engine.service.exportRun({ runId: run.id, outPath: join(tmp.dir, 'out.jsonl'), format: 'jsonl' });
    expect(exported.lines).toBe(3);
  });
});
