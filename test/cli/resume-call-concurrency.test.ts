/**
 * `panoptes resume --call-concurrency N` holds the resumed run to N calls in flight, as `run` does:
 * the bound is the process's, so a run capped at a provider's limit stays capped after a crash.
 * A real `panoptes run` against a local OpenAI-compatible server (a child process that reports the
 * most requests it held at once) is SIGKILLed once its first records land, then resumed against a
 * fresh server of the same kind with a bound of 3, and then of the default.
 * Runs on: Node (tests).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { killAtSeededPoint, readCount, writeCountedCatalog } from '../helpers/kill-at-seeded-point.js';
import { tempDir, writeManifest } from '../helpers/temp.js';
import { startOpenAIServer, type ServerProcess } from '../outages/openai-server.js';

let tmp: ReturnType<typeof tempDir>;
const servers: ServerProcess[] = [];
beforeAll(() => {
  tmp = tempDir();
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.kill()));
  tmp.cleanup();
});

async function server(): Promise<{ server: ServerProcess; catalog: string }> {
  const s = await startOpenAIServer({ delayMs: 40 });
  servers.push(s);
  return { server: s, catalog: writeCountedCatalog(join(tmp.dir, `catalog-${s.port}.json`), s.port, s.port) };
}

/** A run of `vignettes` killed -9 after its first records landed, at one call at a time. */
async function interruptedRun(name: string, vignettes: number): Promise<string> {
  const dataDir = join(tmp.dir, name);
  const { catalog } = await server();
  const manifest = writeManifest(tmp.dir, vignettes, `${name}.jsonl`);
  const run = ['run', '--manifest', manifest, '--models', 'cand', '--call-concurrency', '1', '--no-progress', '--data-dir', dataDir, '--catalog', catalog];
  const landed = () => readCount(join(dataDir, 'panoptes.db'), 'SELECT COUNT(*) AS n FROM responses');
  expect(await killAtSeededPoint(run, landed, 0), 'the run was killed before it finished').toBe(true);
  expect(landed()).toBeLessThan(vignettes);
  return dataDir;
}

it('resume --call-concurrency 3 keeps the resumed run to 3 calls in flight', async () => {
  const dataDir = await interruptedRun('bounded', 60);
  const { server: resumed, catalog } = await server();
  const res = await runCli(['resume', '--call-concurrency', '3', '--data-dir', dataDir, '--catalog', catalog]);
  expect(res.code, res.stderr).toBe(0);
  expect(resumed.requests()).toBeGreaterThan(0);
  expect(resumed.peakInFlight()).toBeLessThanOrEqual(3);
  expect(resumed.peakInFlight(), 'the bound was used, not one call at a time').toBeGreaterThan(1);
}, 60_000);

it('resume without it takes the default of 8, not the interrupted process\'s', async () => {
  const dataDir = await interruptedRun('default', 60);
  const { server: resumed, catalog } = await server();
  const res = await runCli(['resume', '--data-dir', dataDir, '--catalog', catalog]);
  expect(res.code, res.stderr).toBe(0);
  expect(resumed.peakInFlight()).toBeLessThanOrEqual(8);
  expect(resumed.peakInFlight()).toBeGreaterThan(3);
}, 60_000);

it('resume refuses a call bound that is not a positive integer, and changes nothing', async () => {
  const dataDir = join(tmp.dir, 'untouched');
  const res = await runCli(['resume', '--call-concurrency', '0', '--data-dir', dataDir]);
  expect(res.code).toBe(2);
  expect(res.stderr).toMatch(/--call-concurrency/);
  expect(existsSync(dataDir)).toBe(false);
});
