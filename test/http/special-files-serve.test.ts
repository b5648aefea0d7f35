/**
 * Special files against the real `panoptes serve --ui` (a child process on 127.0.0.1): FIFOs in the
 * data folder's `manifests/`, each held open by a writer that never writes (so a blocking open for
 * reading would succeed and its read wait for ever), named by `POST /runs` and the bridge's
 * `checkManifest` five at a time: each is refused at once ("not a regular file") while `/health`
 * answers within a second; an upload whose (predictable) place holds a FIFO or a symlink to a file
 * outside is written as a new regular file, touching neither; and SIGTERM while FIFO requests are
 * under way ends the server promptly and cleanly (exit 0).
 * Runs on: Node (tests).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, constants, lstatSync, mkdirSync, openSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { serve, stopStarted } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

let tmp: ReturnType<typeof tempDir>;
const writers: number[] = [];
beforeAll(() => {
  tmp = tempDir();
});
afterAll(async () => {
  for (const fd of writers) closeSync(fd);
  await stopStarted();
  tmp.cleanup();
});

/** A FIFO with a writer holding it open (O_RDWR opens a FIFO without waiting for the other end). */
function heldFifo(path: string): string {
  execFileSync('mkfifo', [path]);
  writers.push(openSync(path, constants.O_RDWR | constants.O_NONBLOCK));
  return path;
}

it('FIFOs in manifests/ are refused at once without starving /health; uploads write only regular files; SIGTERM ends serve cleanly', async () => {
  const dataDir = join(tmp.dir, 'data');
  const manifests = join(dataDir, 'manifests');
  mkdirSync(manifests, { recursive: true });
  const fifos = Array.from({ length: 5 }, (_, i) => heldFifo(join(manifests, `fifo-${i}.jsonl`)));
  const server = await serve(['--ui', '--data-dir', dataDir]);
  const auth = { authorization: `Bearer ${server.tokenLine}`, 'content-type': 'application/json' };
  const post = (path: string, body: unknown) => fetch(`${server.url}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) });

  const asked = [
    ...fifos.map((f) => post('/runs', { manifest: f, models: ['mock-fast'], epochs: 1 })),
    ...fifos.map((f) => post('/bridge/call/checkManifest', { path: f })),
  ];
  const health = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(1000) }).then((r) => r.status);
  expect(health).toBe(200);
  const answers = await Promise.all(asked.map(async (r) => ({ status: (await r).status, body: JSON.stringify(await (await r).json()) })));
  for (const a of answers) {
    expect(a.status).toBe(400);
    expect(a.body).toContain('not a regular file');
  }

  // The upload's place is predictable: a FIFO at one name, a symlink to a file outside at another.
  const outside = join(tmp.dir, 'outside.txt');
  writeFileSync(outside, 'untouched\n');
  const content = `${JSON.stringify({ id: 'q1', prompt: 'Say hi.' })}\n`;
  const folder = join(manifests, createHash('sha256').update(content).digest('hex').slice(0, 16));
  mkdirSync(folder);
  heldFifo(join(folder, 'a.jsonl'));
  symlinkSync(outside, join(folder, 'b.jsonl'));
  for (const name of ['a.jsonl', 'b.jsonl']) {
    const res = await fetch(`${server.url}/bridge/manifest?fileName=${name}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-ndjson' }, body: content, signal: AbortSignal.timeout(20_000) });
    expect(res.status).toBe(200);
    const kept = join(folder, name);
    expect(((await res.json()) as { value: { path: string; kept: boolean } }).value).toMatchObject({ path: kept, kept: true });
    expect(lstatSync(kept).isFile()).toBe(true);
    expect(readFileSync(kept, 'utf8')).toBe(content);
  }
  expect(readFileSync(outside, 'utf8')).toBe('untouched\n');

  // SIGTERM with FIFO requests under way: the server ends, cleanly, however they fare.
  const late = fifos.map((f) => post('/bridge/call/checkManifest', { path: f }).catch(() => null));
  server.cli.child.kill('SIGTERM');
  const bound = setTimeout(() => server.cli.child.kill('SIGKILL'), 20_000);
  const ended = await server.cli.done;
  clearTimeout(bound);
  await Promise.all(late);
  expect([ended.signal, ended.code], ended.stderr).toEqual([null, 0]);
}, 60_000);
