/**
 * A vignette too long for every context window of its model is that vignette's failure, not its
 * job's: it is given up on at once with its reason (how many tokens it needs, the largest window),
 * listed with the run's given-up vignettes, and the job answers the rest; the run ends as
 * `endWithFailures` says. A failure that is the job's (a refused key) still
 * fails the job as a whole, and `endWithFailures: "done"` does not hide it.
 * Runs on: Node (tests).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimatePromptTokens } from '../../core/models/router/token-estimate.js';
import { useTempEngines } from '../helpers/temp-engine.js';

const engines = useTempEngines();

function cjk(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(0x4e00 + ((i * 7919) % 20_000));
  return s;
}

function setUp(prompts: string[], options: Record<string, unknown> = { latencyMs: 1 }) {
  const catalog = join(engines.dir, 'catalog.json');
  writeFileSync(
    catalog,
    JSON.stringify({
      providers: { mocktest: { kind: 'mock', trainsOnData: false } },
      models: { 'mock-fast': { hosts: [{ provider: 'mocktest', model: 'mock-fast', contextWindow: 128_000, options }] } },
    }),
  );
  const manifest = join(engines.dir, 'manifest.jsonl');
  writeFileSync(manifest, prompts.map((prompt, i) => JSON.stringify({ id: `v${i}`, prompt })).join('\n') + '\n');
  return { engine: engines.open({ catalogPaths: [catalog] }), manifest };
}

describe('a vignette that fits no host', () => {
  it('is given up on with its reason while the job answers the other 19, and the run ends done when it chose so', async () => {
    const long = cjk(200_000);
    const prompts = Array.from({ length: 20 }, (_, i) => (i === 7 ? long : `Question ${i}: what is ${i} + ${i}?`));
    const { engine, manifest } = setUp(prompts);
    const need = await estimatePromptTokens([{ role: 'user', content: long }]);
    expect(need).toBeGreaterThan(128_000);
    const reason = `fits no host of mock-fast: needs ~${need.toLocaleString('en-US')} tokens, the largest window is 128,000`;

    const run = await engine.service.createRun({ manifestPath: manifest, models: ['mock-fast'], epochs: 1, endWithFailures: 'done' });
    const ended = await engine.scheduler.runToCompletion(run.id);
    expect(ended.status, ended.error ?? '').toBe('done');
    const results = engine.store.queries.runResults(run.id);
    expect(results).toHaveLength(19);
    expect(results.map((r) => r.vignetteId)).not.toContain('v7');
    const detail = await engine.service.getRun({ runId: run.id });
    expect(detail.run.failedVignettes).toBe(1);
    expect(detail.failures).toEqual([expect.objectContaining({ vignetteId: 'v7', code: 'bad_request', message: reason, attempts: 1 })]);
    expect(ended.error).toContain(`1 vignettes failed: v7 (mock-fast@1): ${reason}`);
  }, 60_000);

  it('fails the run by default, the other vignettes answered', async () => {
    const prompts = Array.from({ length: 5 }, (_, i) => (i === 2 ? cjk(200_000) : `Question ${i}?`));
    const { engine, manifest } = setUp(prompts);
    const run = await engine.service.createRun({ manifestPath: manifest, models: ['mock-fast'], epochs: 1 });
    const ended = await engine.scheduler.runToCompletion(run.id);
    expect(ended.status).toBe('failed');
    expect(ended.error).toMatch(/1 vignettes failed: v2 \(mock-fast@1\): fits no host of mock-fast/);
    expect(engine.store.queries.runResults(run.id)).toHaveLength(4);
  }, 60_000);

  it('leaves a failure that is the job\'s failing the job, whatever endWithFailures says', async () => {
    // The only host refuses the key: every vignette would meet it alike.
    const { engine, manifest } = setUp(['Question 1?', 'Question 2?', cjk(200_000)], { errorRate: 1, errorKind: 'auth' });
    const run = await engine.service.createRun({ manifestPath: manifest, models: ['mock-fast'], epochs: 1, endWithFailures: 'done' });
    const ended = await engine.scheduler.runToCompletion(run.id);
    expect(ended.status).toBe('failed');
    expect(ended.error).toMatch(/mock-fast@1: .*401/);
    expect((await engine.service.getRun({ runId: run.id })).run.failedVignettes).toBe(0);
  }, 60_000);
});
