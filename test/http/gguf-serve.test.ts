/**
 * A local GGUF model behind the real `panoptes serve` (and `panoptes run`): asked for 4,000 tokens
 * from a 256-token window, every call is answered up to the window and the run ends `done`, while
 * `/health`, probed every 100 ms, always answers within a second (the model runs in a process of
 * its own: nothing it does holds the engine's event loop); and SIGTERM while the model is
 * generating stops the command within 5 s, its model process with it.
 * Runs on: Node (tests).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startCli, waitForStderr } from '../helpers/cli.js';
import { serve, started, stopStarted } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';
import { GGUF_SKIP, ggufSuite, MODEL, modelProcessesOf } from '../models/gguf-model.js';
import { send } from './harness.js';

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterEach(stopStarted);
afterAll(() => tmp.cleanup());

function ggufCatalog(contextWindow: number): string {
  const path = join(tmp.dir, `gguf-${contextWindow}.json`);
  writeFileSync(
    path,
    JSON.stringify({
      providers: { local: { kind: 'gguf', trainsOnData: false, timeoutMs: 120_000 } },
      models: { tiny: { hosts: [{ provider: 'local', model: MODEL, contextWindow, inputPerMTok: 0, outputPerMTok: 0 }] } },
    }),
  );
  return path;
}

function manifest(count: number): string {
  const path = join(tmp.dir, `tiny-${count}.jsonl`);
  const lines = Array.from({ length: count }, (_, i) => JSON.stringify({ id: `v${i}`, prompt: `Tell me a long story about the number ${i}.` }));
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

describe.skipIf(GGUF_SKIP !== undefined)(ggufSuite('a GGUF model behind the command line'), () => {
  it('answers 4,000-token requests from a 256-token window, done, while /health answers within a second', async () => {
    const dataDir = join(tmp.dir, 'capped');
    const s = await serve(['--data-dir', dataDir, '--manifest-root', tmp.dir, '--catalog', ggufCatalog(256)], { PANOPTES_TOKEN: '' });
    const host = `127.0.0.1:${s.port}`;
    const headers = { host, authorization: `Bearer ${s.tokenLine}` };
    const body = { manifest: manifest(6), models: ['tiny'], epochs: 2, sampling: { maxTokens: 4000, temperature: 1 } };
    const created = await send(s.port, 'POST', '/runs', { headers, body: JSON.stringify(body) });
    expect(created.status, created.text).toBe(201);
    const runId = created.json.id as string;

    // /health every 100 ms for as long as the run runs, each probe timed on its own.
    let slowest = 0;
    let probes = 0;
    let running = true;
    const prober = (async () => {
      while (running) {
        const t = performance.now();
        expect((await send(s.port, 'GET', '/health', { headers: { host } })).status).toBe(200);
        slowest = Math.max(slowest, performance.now() - t);
        probes += 1;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    let run: { status: string; error: string | null } = { status: 'queued', error: null };
    const deadline = Date.now() + 200_000;
    while (!['done', 'failed', 'cancelled'].includes(run.status) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      run = (await send(s.port, 'GET', `/runs/${runId}`, { headers })).json.run as typeof run;
    }
    running = false;
    await prober;
    expect(run.status, run.error ?? '').toBe('done');
    const page = await send(s.port, 'GET', `/runs/${runId}/responses?limit=100`, { headers });
    const items = page.json.items as Array<{ vignetteId: string; epoch: number; usage: { inputTokens: number; outputTokens: number }; finishReason?: string }>;
    expect(items).toHaveLength(12);
    expect(new Set(items.map((i) => `${i.vignetteId}@${i.epoch}`)).size).toBe(12);
    // Every answer stayed inside the window.
    for (const i of items) expect(i.usage.inputTokens + i.usage.outputTokens).toBeLessThan(256);
    // Each record says why it ended: at the window (`length`), or at the model's own end token.
    for (const i of items) expect(['length', 'stop']).toContain(i.finishReason);
    for (const i of items) if (i.usage.inputTokens + i.usage.outputTokens >= 255) expect(i.finishReason).toBe('length');
    process.stdout.write(`gguf through serve: ${probes} /health probes, slowest ${Math.round(slowest)} ms\n`);
    expect(probes).toBeGreaterThan(5);
    expect(slowest).toBeLessThan(1000);
  }, 240_000);

  it('SIGTERM stops `panoptes serve` within 5 s while the model is generating, and its model process goes too', async () => {
    const dataDir = join(tmp.dir, 'serve-term');
    const s = await serve(['--data-dir', dataDir, '--manifest-root', tmp.dir, '--catalog', ggufCatalog(4096)], { PANOPTES_TOKEN: '' });
    const headers = { host: `127.0.0.1:${s.port}`, authorization: `Bearer ${s.tokenLine}` };
    // No cap: each answer takes the window's room, about 4,000 tokens, seconds of generating.
    const created = await send(s.port, 'POST', '/runs', { headers, body: JSON.stringify({ manifest: manifest(20), models: ['tiny'], epochs: 1 }) });
    expect(created.status, created.text).toBe(201);
    const runId = created.json.id as string;
    // Once an answer has landed, the model is generating the next.
    await expect
      .poll(async () => ((await send(s.port, 'GET', `/runs/${runId}/responses?limit=1`, { headers })).json.items as unknown[]).length, { timeout: 120_000, interval: 100 })
      .toBeGreaterThan(0);
    const models = modelProcessesOf(s.cli.child.pid!);
    expect(models).toHaveLength(1);
    const t = performance.now();
    s.cli.child.kill('SIGTERM');
    const done = await s.cli.done;
    const tookMs = performance.now() - t;
    process.stdout.write(`gguf: serve exited ${Math.round(tookMs)} ms after SIGTERM\n`);
    expect(done.code, done.stderr).toBe(0);
    expect(tookMs).toBeLessThan(5000);
    await expect.poll(() => existsSync(`/proc/${models[0]}`), { timeout: 5000 }).toBe(false);
  }, 180_000);

  it('SIGTERM stops `panoptes run` within 5 s while the model is generating', async () => {
    const dataDir = join(tmp.dir, 'run-term');
    const cli = startCli(['run', '--manifest', manifest(20), '--models', 'tiny', '--no-progress', '--data-dir', dataDir, '--catalog', ggufCatalog(4096)]);
    started.push(cli);
    await waitForStderr(cli, /run (r\w+): 1 jobs/, 60_000);
    // Its model process loaded and generating: it has used a second of CPU.
    await expect
      .poll(
        () => {
          const [pid] = modelProcessesOf(cli.child.pid!);
          if (pid === undefined) return 0;
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
          return Number(stat[11]) + Number(stat[12]);
        },
        { timeout: 120_000, interval: 100 },
      )
      .toBeGreaterThan(100);
    const [model] = modelProcessesOf(cli.child.pid!);
    const t = performance.now();
    cli.child.kill('SIGTERM');
    const done = await cli.done;
    const tookMs = performance.now() - t;
    process.stdout.write(`gguf: run exited ${Math.round(tookMs)} ms after SIGTERM\n`);
    expect(done.code, done.stderr).toBe(130);
    expect(tookMs).toBeLessThan(5000);
    await expect.poll(() => existsSync(`/proc/${model}`), { timeout: 5000 }).toBe(false);
  }, 180_000);
});
