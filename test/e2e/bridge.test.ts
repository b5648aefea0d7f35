/**
 * The browser bridge at its boundary, without a browser: who may call it (token, Host, Origin),
 * what may be called (the contract's allowlist, minus exportRun), how inputs are checked, the
 * manifest upload, the event socket, the export download (one-time links, bearer, streaming that
 * never holds the database busy), and the static app with its CSP. A real engine over a temp data
 * dir, the real server on 127.0.0.1 port 0.
 * Runs on: Node (tests).
 */
import { request } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { toJsonlLine } from '../../core/export.js';
import type { ControlEvent, RunEvent } from '../../core/service/contract.js';
import { send } from '../http/harness.js';
import { writeManifest, writeMockCatalog } from '../helpers/temp.js';
import { TOKEN, type InProcessUi } from './harness.js';
import { useUiServer } from './ui-session.js';

function protocols(token: string): string[] {
  return ['panoptes', `panoptes.token.${Buffer.from(token).toString('base64url')}`];
}

/** Opens the event socket; resolves when open, rejects with the refusal's status. */
function openEvents(ui: InProcessUi, opts: { protocols?: string[]; origin?: string; path?: string } = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${ui.port}${opts.path ?? '/bridge/events'}`, opts.protocols ?? protocols(TOKEN), {
      ...(opts.origin === undefined ? {} : { origin: opts.origin }),
    });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

describe('the browser bridge', () => {
  // No browser: this file speaks raw HTTP and WebSocket to the bridge, as a hostile page might.
  const s = useUiServer({ engine: (dir) => ({ catalogPaths: [writeMockCatalog(dir, { quick: { latencyMs: 0 }, steady: { latencyMs: 1 } })], tickMs: 20 }) });
  let manifest: string;
  const host = () => `127.0.0.1:${s.ui.port}`;
  const call = (method: string, body: unknown, headers: Record<string, string> = {}) =>
    send(s.ui.port, 'POST', `/bridge/call/${method}`, {
      headers: { host: host(), authorization: `Bearer ${TOKEN}`, ...headers },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    manifest = writeManifest(s.dir, 40);
  });

  it('answers contract calls with an Envelope, only with the token, only for its own Host and Origin', async () => {
    const okAnswer = await call('listRuns', {});
    expect(okAnswer.status).toBe(200);
    expect(okAnswer.json).toEqual({ ok: true, value: [] });

    expect((await call('listRuns', {}, { authorization: '' })).status).toBe(401);
    expect((await call('listRuns', {}, { authorization: 'Bearer wrong-token-0123456789' })).status).toBe(401);
    expect((await call('listRuns', {}, { host: `evil.example:${s.ui.port}` })).status).toBe(403);
    expect((await call('listRuns', {}, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await call('listRuns', {}, { origin: `http://${host()}` })).status).toBe(200);
  });

  it('serves exactly the contract minus exportRun, and checks every input against its schema', async () => {
    for (const method of ['exportRun', 'nope', 'constructor', '__proto__', 'toString']) {
      const res = await call(method, {});
      expect(res.status, method).toBe(404);
      expect(res.json.ok).toBe(false);
      expect(res.json.error.code).toBe('not_found');
    }
    const bad = await call('createRun', { manifestPath: manifest, models: [], epochs: 1 });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ ok: false, error: { code: 'invalid_input', where: 'models' } });
    expect((await call('stats', { runId: 5 })).json.error).toMatchObject({ code: 'invalid_input', where: 'runId' });
    expect((await call('catalog', { extra: true })).status).toBe(400);
    expect((await call('getRun', { runId: 'r-missing' })).json.error).toMatchObject({ code: 'not_found' });
  });

  it('takes a manifest upload as text and checks it where the run will read it', async () => {
    const upload = (body: string) =>
      send(s.ui.port, 'POST', '/bridge/manifest?fileName=mine.jsonl', {
        headers: { host: host(), authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain; charset=utf-8' },
        body,
      });
    const good = await upload('{"id":"a","prompt":"one"}\n{"id":"b","prompt":"two"}\n');
    expect(good.json.ok).toBe(true);
    expect(good.json.value).toMatchObject({ count: 2, issues: [] });
    expect(good.json.value.path).toMatch(/manifests[\\/][0-9a-f]{16}[\\/]mine\.jsonl$/);
    const broken = await upload('{"id":"a","prompt":"one"}\nnot json\n');
    expect(broken.json.value.issues).toEqual([{ line: 2, message: expect.stringMatching(/^invalid JSON/) }]);
    const anonymous = await send(s.ui.port, 'POST', '/bridge/manifest', { headers: { host: host(), 'content-type': 'text/plain' }, body: 'x' });
    expect(anonymous.status).toBe(401);
  });

  it('pushes run events over the socket to a tab with the token, and refuses the rest', async () => {
    await expect(openEvents(s.ui, { protocols: ['panoptes'] })).rejects.toThrow('HTTP 401');
    await expect(openEvents(s.ui, { protocols: protocols('wrong-token-0123456789') })).rejects.toThrow('HTTP 401');
    await expect(openEvents(s.ui, { origin: 'http://evil.example' })).rejects.toThrow('HTTP 403');
    await expect(openEvents(s.ui, { path: '/bridge/other' })).rejects.toThrow('HTTP 404');

    const ws = await openEvents(s.ui, { origin: `http://${host()}` });
    expect(ws.protocol).toBe('panoptes');
    const events: ControlEvent[] = [];
    ws.on('message', (data) => events.push(JSON.parse(String(data)) as ControlEvent));
    const created = await call('createRun', { manifestPath: manifest, models: ['quick', 'steady'], epochs: 2 });
    const runId = created.json.value.id as string;
    const deadline = Date.now() + 20_000;
    const last = () => events.filter((e): e is RunEvent => e.type === 'run' && e.run.id === runId).at(-1);
    while (last()?.run.status !== 'done' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    ws.close();
    const final = last()!;
    expect(final.run.status).toBe('done');
    expect(final.run.calls).toBe(160);
    expect(final.usage.map((u) => u.calls)).toEqual([80, 80]);
    const jobIds = new Set(events.flatMap((e) => (e.type === 'run' ? e.jobs.map((j) => j.id) : [])));
    expect(jobIds.size).toBe(4);
  });

  it('streams an export to a one-time link or a bearer token, and never to anyone else', async () => {
    const run = (await call('listRuns', {})).json.value[0];
    const expected = [...s.ui.engine.store.queries.iterateResponses(run.id)].map((r) => `${toJsonlLine(r)}\n`).join('');
    const linkFor = async (format: string) => (await send(s.ui.port, 'POST', '/bridge/export-link', {
      headers: { host: host(), authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ runId: run.id, format }),
    })).json.value as { url: string; fileName: string };

    const link = await linkFor('jsonl');
    expect(link.fileName).toBe(`${run.id}-responses.jsonl`);
    const first = await send(s.ui.port, 'GET', link.url, { headers: { host: host() } });
    expect(first.status).toBe(200);
    expect(first.headers['content-disposition']).toBe(`attachment; filename="${run.id}-responses.jsonl"`);
    expect(first.text).toBe(expected);
    expect((await send(s.ui.port, 'GET', link.url, { headers: { host: host() } })).status).toBe(401);

    const csvLink = await linkFor('csv');
    expect((await send(s.ui.port, 'GET', csvLink.url.replace('.csv?', '.jsonl?'), { headers: { host: host() } })).status).toBe(401);
    expect((await send(s.ui.port, 'GET', `/bridge/export/${run.id}.jsonl`, { headers: { host: host() } })).status).toBe(401);
    const bearer = await send(s.ui.port, 'GET', `/bridge/export/${run.id}.jsonl`, { headers: { host: host(), authorization: `Bearer ${TOKEN}` } });
    expect(bearer.text).toBe(expected);
    const missing = await send(s.ui.port, 'GET', '/bridge/export/r-missing.jsonl', { headers: { host: host(), authorization: `Bearer ${TOKEN}` } });
    expect(missing.status).toBe(404);
  });

  it('keeps the database free while a download stalls: the run being exported still finishes', async () => {
    const big = writeManifest(s.dir, 3000, 'big.jsonl');
    const created = await call('createRun', { manifestPath: big, models: ['quick'], epochs: 3, concurrency: 1 });
    const runId = created.json.value.id as string;
    while (s.ui.engine.store.queries.responseCount(runId) < 500) await new Promise((r) => setTimeout(r, 10));
    // A reader that takes one chunk and then stops reading while the run goes on writing.
    const stalled = await new Promise<{ resume: () => Promise<string> }>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: s.ui.port, path: `/bridge/export/${runId}.jsonl`, headers: { host: host(), authorization: `Bearer ${TOKEN}` } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.once('data', (chunk: string) => {
            body += chunk;
            res.pause();
            resolve({
              resume: () =>
                new Promise((done) => {
                  res.on('data', (c: string) => (body += c));
                  res.on('end', () => done(body));
                  res.resume();
                }),
            });
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
    const deadline = Date.now() + 30_000;
    while (s.ui.engine.store.queries.getRun(runId)!.status === 'running' || s.ui.engine.store.queries.getRun(runId)!.status === 'queued') {
      if (Date.now() > deadline) throw new Error('run did not finish');
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(s.ui.engine.store.queries.getRun(runId)).toMatchObject({ status: 'done', error: null });
    const lines = (await stalled.resume()).trimEnd().split('\n');
    const keys = lines.map((l) => {
      const r = JSON.parse(l) as { model: string; epoch: number; vignette_id: string };
      return `${r.model}|${r.epoch}|${r.vignette_id}`;
    });
    expect(keys.length).toBeGreaterThanOrEqual(500);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('serves the app to anyone on its own Host, under a CSP with no inline script', async () => {
    const page = await send(s.ui.port, 'GET', '/', { headers: { host: host() } });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).not.toContain('unsafe');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(page.text)![1]!;
    const asset = await send(s.ui.port, 'GET', `/${script}`, { headers: { host: host() } });
    expect(asset.status).toBe(200);
    expect(asset.headers['cache-control']).toContain('immutable');
    expect((await send(s.ui.port, 'GET', '/', { headers: { host: `evil.example:${s.ui.port}` } })).status).toBe(403);
    const escape = await send(s.ui.port, 'GET', '/..%2fpackage.json', { headers: { host: host() } });
    expect([403, 404]).toContain(escape.status);
    expect(escape.text).not.toContain('"name": "panoptes"');
  });
});
