/**
 * Two vignettes with the very same prompt, over several epochs, against a real OpenAI-compatible
 * server process that counts what reaches it, with the prompt cache on: the model answers every
 * (vignette, epoch) itself (requests = vignettes x epochs, no record cached), epochs that pose the
 * same prompts report the same tokens, and the run's `/runs/:id/stats` is the sum of its records.
 * Runs on: Node (tests).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PricedResponse } from '../../core/service/contract.js';
import { tempDir } from '../helpers/temp.js';
import { startApi, waitForRun, type ApiHarness } from '../http/harness.js';
import { startOpenAIServer, type ServerProcess } from './openai-server.js';

const EPOCHS = 4;
const PROMPTS = ['What is the capital of France?', 'What is the capital of France?', 'Name a prime number above 100.'];

describe('identical prompts in one run', () => {
  const tmp = tempDir();
  let server: ServerProcess;
  let api: ApiHarness;

  beforeAll(async () => {
    server = await startOpenAIServer({ delayMs: 5 });
    const catalog = join(tmp.dir, 'served.json');
    writeFileSync(
      catalog,
      JSON.stringify({
        providers: { srv: { kind: 'openai', baseUrl: `http://127.0.0.1:${server.port}/v1`, trainsOnData: false, timeoutMs: 5000 } },
        models: { m: { hosts: [{ provider: 'srv', model: 'm', contextWindow: 8192, inputPerMTok: 2000, outputPerMTok: 9000 }] } },
      }),
    );
    api = await startApi({ engine: { catalogPaths: [catalog] }, http: { manifestRoots: [tmp.dir] } });
  });
  afterAll(async () => {
    await api.close();
    await server.kill();
    tmp.cleanup();
  });

  it('are each answered by the model in every epoch, and the stats are the sum of the records', async () => {
    const manifest = join(tmp.dir, 'twins.jsonl');
    writeFileSync(manifest, PROMPTS.map((prompt, i) => JSON.stringify({ id: `v${i}`, prompt })).join('\n') + '\n');
    const created = await api.call('POST', '/runs', { body: { manifest, models: ['m'], epochs: EPOCHS } });
    expect(created.status, created.text).toBe(201);
    const runId = created.json.id as string;
    expect((await waitForRun(api, runId)).json.run.status).toBe('done');

    // Every (vignette, epoch) reached the model: nothing was answered from a sibling's or another epoch's answer.
    expect(server.requests()).toBe(PROMPTS.length * EPOCHS);
    const page = (await api.call('GET', `/runs/${runId}/responses?limit=1000`)).json as { items: PricedResponse[]; nextCursor: number | null };
    expect(page.nextCursor).toBeNull();
    const records = page.items;
    expect(records).toHaveLength(PROMPTS.length * EPOCHS);
    expect(records.filter((r) => r.cached)).toEqual([]);
    expect(new Set(records.map((r) => `${r.vignetteId}|${r.epoch}`)).size).toBe(PROMPTS.length * EPOCHS);

    // The same prompts give the same tokens, epoch after epoch (the server counts characters).
    const tokensOf = (epoch: number) => {
      const own = records.filter((r) => r.epoch === epoch);
      return [own.reduce((t, r) => t + r.usage.inputTokens, 0), own.reduce((t, r) => t + r.usage.outputTokens, 0)];
    };
    for (let e = 2; e <= EPOCHS; e++) expect(tokensOf(e)).toEqual(tokensOf(1));
    const jobs = (await api.call('GET', `/runs/${runId}`)).json.jobs as Array<{ usage: { inputTokens: number; outputTokens: number } }>;
    expect(new Set(jobs.map((j) => `${j.usage.inputTokens}/${j.usage.outputTokens}`)).size).toBe(1);
    const twin = (epoch: number, id: string) => records.find((r) => r.epoch === epoch && r.vignetteId === id)!.usage;
    expect(twin(1, 'v1')).toEqual(twin(1, 'v0'));

    // The run's stats are its records summed.
    const stats = (await api.call('GET', `/runs/${runId}/stats`)).json as {
      calls: number;
      input_tokens: number;
      output_tokens: number;
      cached_calls: number;
      total_est_cost_usd: number;
    };
    expect(stats).toMatchObject({
      calls: records.length,
      input_tokens: records.reduce((t, r) => t + r.usage.inputTokens, 0),
      output_tokens: records.reduce((t, r) => t + r.usage.outputTokens, 0),
      cached_calls: 0,
    });
    expect(Math.round(stats.total_est_cost_usd * 100)).toBe(Math.round(records.reduce((t, r) => t + r.estCostUsd, 0) * 100));
    expect(stats.total_est_cost_usd).toBeGreaterThan(0.01);
  }, 60_000);
});
