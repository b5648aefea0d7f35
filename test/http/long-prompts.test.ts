/**
 * A run whose prompts the tokenizer cannot split (200,000 CJK characters, 200,000 `x`), served by
 * the real `panoptes serve`, while `/health` is polled the whole time: no answer may be slow,
 * because no step of the run may hold the event loop (the token estimate once took 40 s on one).
 * Runs on: Node (tests).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { serve, stopStarted } from '../helpers/serve.js';
import { tempDir, writeMockCatalog } from '../helpers/temp.js';
import { send } from './harness.js';

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterEach(stopStarted);
afterAll(() => tmp.cleanup());

function cjk(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(0x4e00 + ((i * 7919) % 20_000));
  return s;
}

it('serves /health within a second while a run poses 200,000-character CJK and `x` prompts', async () => {
  // A window that holds the prompts but is smaller than the free bound (3 x 200,000), so every call counts its prompt's tokens.
  const catalog = writeMockCatalog(tmp.dir, { wide: { latencyMs: 5 } });
  writeFileSync(catalog, readFileSync(catalog, 'utf8').replace('"contextWindow": 100000', '"contextWindow": 590000'));
  const manifest = join(tmp.dir, 'long.jsonl');
  writeFileSync(manifest, [JSON.stringify({ id: 'cjk', prompt: cjk(200_000) }), JSON.stringify({ id: 'xs', prompt: 'x'.repeat(200_000) })].join('\n') + '\n');
  const s = await serve(['--data-dir', join(tmp.dir, 'data'), '--manifest-root', tmp.dir, '--catalog', catalog], { PANOPTES_TOKEN: '' });
  const host = `127.0.0.1:${s.port}`;
  const headers = { host, authorization: `Bearer ${s.tokenLine}` };

  const created = await send(s.port, 'POST', '/runs', { headers, body: JSON.stringify({ manifest, models: ['wide'], epochs: 3 }) });
  expect(created.status, created.text).toBe(201);
  const runId = created.json.id as string;

  let slowest = 0;
  let polls = 0;
  let status = '';
  const deadline = Date.now() + 90_000;
  let error: string | null = null;
  while (!['done', 'failed', 'cancelled'].includes(status) && Date.now() < deadline) {
    const t = performance.now();
    expect((await send(s.port, 'GET', '/health', { headers: { host } })).status).toBe(200);
    slowest = Math.max(slowest, performance.now() - t);
    polls += 1;
    ({ status, error } = (await send(s.port, 'GET', `/runs/${runId}`, { headers })).json.run);
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(status, error ?? '').toBe('done');
  expect(polls).toBeGreaterThan(1);
  expect(slowest).toBeLessThan(1000);
}, 120_000);
