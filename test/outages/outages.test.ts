/**
 * Model calls against a real HTTP server process that goes away: killed for 5 s and restarted on
 * the same port mid-sweep, with and without a second host, the run ends done with every record
 * exactly once, after a bounded number of attempts (counted at the server and in the router's
 * metrics), showing "waiting for host" while the only host is down. Vignettes that always fail
 * are given up on after their attempts, listed with their last errors, and posed again by
 * retryRun; an outage longer than the patience ends the run, not the process.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../core/service/contract.js';
import { openEngine, type Engine } from '../../core/service/engine.js';
import { tempDir } from '../helpers/temp.js';
import { startOpenAIServer, type ServerProcess } from './openai-server.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function setUp(ports: number[], opts: { hostPatienceMs?: number; vignettes: string[] }): { engine: Engine; manifest: string } {
  const { dir, cleanup } = tempDir();
  const catalog = join(dir, 'catalog.json');
  writeFileSync(
    catalog,
    JSON.stringify({
      providers: Object.fromEntries(
        ports.map((p, i) => [`srv${i}`, { kind: 'openai', baseUrl: `http://127.0.0.1:${p}/v1`, trainsOnData: false, timeoutMs: 5000 }]),
      ),
      models: { m: { hosts: ports.map((_, i) => ({ provider: `srv${i}`, model: 'm', contextWindow: 8192, inputPerMTok: 0, outputPerMTok: 0 })) } },
    }),
  );
  const manifest = join(dir, 'manifest.jsonl');
  writeFileSync(manifest, opts.vignettes.map((prompt, i) => JSON.stringify({ id: `v${i}`, prompt })).join('\n') + '\n');
  const engine = openEngine({
    dataDir: join(dir, 'data'),
    catalogPaths: [catalog],
    callConcurrency: 4,
    logger: pino({ level: 'silent' }),
    router: { hostPatienceMs: opts.hostPatienceMs ?? 60_000 },
  });
  cleanups.push(() => cleanup(), () => engine.close());
  return { engine, manifest };
}

function serverCleanup(s: () => ServerProcess | undefined): void {
  cleanups.push(async () => s()?.kill());
}

async function until(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const prompts = (n: number) => Array.from({ length: n }, (_, i) => `question ${i}`);

/** Kills the server once `landed` records are in, keeps it down 5 s, restarts it on the same port. */
async function outage(engine: Engine, runId: string, get: () => ServerProcess, set: (s: ServerProcess) => void, seen: RunSummary[]): Promise<void> {
  await until(() => engine.store.queries.responseCount(runId) >= 10);
  const port = get().port;
  await get().kill();
  const downAt = Date.now();
  while (Date.now() - downAt < 5000) {
    seen.push((await engine.service.getRun({ runId })).run);
    await sleep(250);
  }
  set(await startOpenAIServer({ port, delayMs: 40 }));
}

function connectionErrors(engine: Engine): number {
  return engine.router.metrics({ since: 0 }).hosts.reduce((n, h) => n + (h.errors.connection ?? 0), 0);
}

describe('outages of a real server process', () => {
  it('rides out a 5 s outage of the only host: done, every record once, bounded attempts, "waiting for host" shown', async () => {
    let server = await startOpenAIServer({ delayMs: 40 });
    const first = server;
    serverCleanup(() => server);
    const { engine, manifest } = setUp([server.port], { vignettes: prompts(80) });
    const run = await engine.service.createRun({ manifestPath: manifest, models: ['m'], epochs: 1, skipPromptCache: true });
    const done = engine.scheduler.runToCompletion(run.id);
    const seen: RunSummary[] = [];
    const before = { requests: 0 };
    await outage(engine, run.id, () => server, (s) => {
      before.requests = first.requests();
      server = s;
    }, seen);
    const final = await done;

    expect(final.status).toBe('done');
    expect(final.error).toBeNull();
    const records = engine.store.queries.runResults(run.id);
    expect(records).toHaveLength(80);
    expect(new Set(records.map((r) => r.vignetteId)).size).toBe(80);
    // Shown live while the host was down, and cleared once it was back.
    expect(seen.some((r) => r.waitingForHost?.host === 'srv0/m')).toBe(true);
    expect((await engine.service.getRun({ runId: run.id })).run.waitingForHost).toBeNull();
    // Bounded attempts: the calls in flight when it died, then a probe per rest (<= 5 s, jittered), not a hot loop.
    const refused = connectionErrors(engine);
    expect(refused).toBeGreaterThan(0);
    expect(refused).toBeLessThanOrEqual(40);
    const reached = before.requests + server.requests();
    expect(reached).toBeLessThanOrEqual(80 + 8);
  }, 60_000);

  it('rides out a 5 s outage of one of two hosts: the other takes the calls', async () => {
    let a = await startOpenAIServer({ delayMs: 40 });
    const b = await startOpenAIServer({ delayMs: 40 });
    serverCleanup(() => a);
    serverCleanup(() => b);
    const { engine, manifest } = setUp([a.port, b.port], { vignettes: prompts(80) });
    const run = await engine.service.createRun({ manifestPath: manifest, models: ['m'], epochs: 1, skipPromptCache: true });
    const done = engine.scheduler.runToCompletion(run.id);
    await outage(engine, run.id, () => a, (s) => (a = s), []);
    const final = await done;
    expect(final.status).toBe('done');
    const records = engine.store.queries.runResults(run.id);
    expect(records).toHaveLength(80);
    expect(new Set(records.map((r) => r.vignetteId)).size).toBe(80);
    expect(connectionErrors(engine)).toBeLessThanOrEqual(40);
  }, 60_000);

  it('gives up on vignettes that always fail, keeps going, lists each with its last error, and retries them', async () => {
    let server = await startOpenAIServer({ delayMs: 5 });
    serverCleanup(() => server);
    const vignettes = [...prompts(9), 'ALWAYS500 please', 'ALWAYS429 please', 'ALWAYSEMPTY please'];
    const { engine, manifest } = setUp([server.port], { vignettes });
    const run = await engine.service.createRun({ manifestPath: manifest, models: ['m'], epochs: 1, skipPromptCache: true });
    const started = Date.now();
    const failed = await engine.scheduler.runToCompletion(run.id);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(failed.status).toBe('failed');
    expect(engine.store.queries.runResults(run.id)).toHaveLength(9);
    const detail = await engine.service.getRun({ runId: run.id });
    expect(detail.run.failedVignettes).toBe(3);
    expect(detail.failures.map((f) => [f.vignetteId, f.code])).toEqual([
      ['v9', 'server_error'],
      ['v10', 'rate_limited'],
      ['v11', 'empty_output'],
    ]);
    for (const f of detail.failures) expect(f.attempts).toBe(6);
    expect(failed.error).toMatch(/3 vignettes failed: v9 \(m@1\): .*500.*; v10 \(m@1\): .*429.*; v11 \(m@1\): .*empty answer/);
    // A bounded number of attempts reached the server: 9 answers and 6 tries for each of 3.
    // (Polled: the server counts a request on its stdout, which may reach this process after the answer did.)
    await expect.poll(() => server.requests(), { timeout: 5_000, interval: 20 }).toBe(9 + 3 * 6);

    // Retry the failed vignettes once the server is healed: only they are posed again.
    const port = server.port;
    await server.kill();
    server = await startOpenAIServer({ port, delayMs: 5, healed: true });
    await expect(engine.service.retryRun({ runId: run.id, scope: 'failed' })).resolves.toMatchObject({ status: 'queued' });
    const retried = await engine.scheduler.runToCompletion(run.id);
    expect(retried.status).toBe('done');
    expect(retried.failedCount).toBe(0);
    expect(engine.store.queries.runResults(run.id)).toHaveLength(12);
    expect(engine.store.queries.vignetteFailureCount(run.id)).toBe(0);
    await expect.poll(() => server.requests(), { timeout: 5_000, interval: 20 }).toBe(3);
    // A run that is done has nothing to retry; an unknown one is not found.
    await expect(engine.service.retryRun({ runId: run.id, scope: 'failed' })).rejects.toMatchObject({ code: 'conflict' });
    await expect(engine.service.retryRun({ runId: 'nope', scope: 'all' })).rejects.toMatchObject({ code: 'not_found' });
  }, 60_000);

  it('ends done with failures counted when the run chose so', async () => {
    const server = await startOpenAIServer({ delayMs: 5 });
    serverCleanup(() => server);
    const { engine, manifest } = setUp([server.port], { vignettes: [...prompts(5), 'ALWAYS500'] });
    const run = await engine.service.createRun({ manifestPath: manifest, models: ['m'], epochs: 2, skipPromptCache: true, endWithFailures: 'done' });
    const final = await engine.scheduler.runToCompletion(run.id);
    expect(final.status).toBe('done');
    expect(final.failedCount).toBe(2);
    expect(final.error).toMatch(/2 vignettes failed: v5 \(m@1\).*v5 \(m@2\)/);
    expect((await engine.service.getRun({ runId: run.id })).run.failedVignettes).toBe(2);
  }, 60_000);

  it('gives up when the only host stays down past the patience: the run fails, listing what is missing', async () => {
    const server = await startOpenAIServer({ delayMs: 5 });
    const port = server.port;
    await server.kill();
    const { engine, manifest } = setUp([port], { vignettes: prompts(20), hostPatienceMs: 2000 });
    const run = await engine.service.createRun({ manifestPath: manifest, models: ['m'], epochs: 1, skipPromptCache: true });
    const started = Date.now();
    const final = await engine.scheduler.runToCompletion(run.id);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(final.status).toBe('failed');
    expect(engine.store.queries.vignetteFailureCount(run.id)).toBe(20);
    expect(final.error).toMatch(/20 vignettes failed: .*down since .*host patience \(2 s\)/);
    // Probes only: a handful per rest, never a hot loop.
    expect(connectionErrors(engine)).toBeLessThanOrEqual(40);
  }, 60_000);
});
