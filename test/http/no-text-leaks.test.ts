/**
 * Backpressure answers and metrics carry no eval text (the gateway's guarantee): a sweep whose every
 * prompt holds a unique marker, answered by a provider whose every response holds another, leaves
 * neither marker in any `router_calls` row or in `GET /metrics`; a 503 (in-flight cap) and a 429
 * (queued-run cap) refusing requests that name the marked manifest carry neither either. The
 * records themselves do hold both: the markers are real, so the test can fail.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { initTelemetry } from '../../core/telemetry.js';
import { tempDir } from '../helpers/temp.js';
import { FakeProvider } from '../models/fake-provider.js';
import { TOKEN, openRaw, startApi, waitForRun, type ApiHarness } from './harness.js';

initTelemetry({ defaultLevel: 'silent' });

let api: ApiHarness | undefined;
let fake: FakeProvider | undefined;
let tmp: ReturnType<typeof tempDir> | undefined;
afterEach(async () => {
  await api?.close();
  await fake?.stop();
  tmp?.cleanup();
  tmp = undefined;
  api = undefined;
  fake = undefined;
});

describe('no prompt or response text in backpressure answers or metrics', () => {
  it('holds over a sweep with a unique marker in every prompt and response', async () => {
    const promptMark = `PROMPTMARK${randomBytes(6).toString('hex')}`;
    const responseMark = `RESPONSEMARK${randomBytes(6).toString('hex')}`;
    fake = await new FakeProvider().start();
    fake.always('leaky-words', { kind: 'ok', text: `${responseMark} the answer is four` });
    tmp = tempDir();
    const catalogPath = join(tmp.dir, 'fake-catalog.json');
    writeFileSync(
      catalogPath,
      JSON.stringify({
        providers: { fake: { kind: 'openai', baseUrl: `${fake.url}/v1`, trainsOnData: false, timeoutMs: 5000 } },
        models: { words: { hosts: [{ provider: 'fake', model: 'leaky-words', contextWindow: 100000 }] } },
      }),
    );
    api = await startApi({
      startScheduler: false,
      engine: { catalogPaths: [catalogPath] },
      http: { maxQueuedRuns: 1, maxConcurrent: 4, requestTimeoutMs: 20_000 },
    });
    const manifest = join(api.dir, `${promptMark}.jsonl`);
    writeFileSync(manifest, Array.from({ length: 12 }, (_, i) => JSON.stringify({ id: `v${i}`, prompt: `${promptMark}-${i}: what is 2 + 2?` })).join('\n') + '\n');
    const body = { manifest, models: ['words'], epochs: 2 };

    const created = await api.call('POST', '/runs', { body });
    expect(created.status).toBe(201);
    // The queue is full: a second run is refused with 429.
    const queueFull = await api.call('POST', '/runs', { body });
    expect(queueFull.status).toBe(429);
    // Every slot is held: the next request is shed with 503.
    const holders = await Promise.all(
      [0, 1, 2, 3].map(() =>
        openRaw(
          api!.port,
          `POST /runs HTTP/1.1\r\nHost: 127.0.0.1:${api!.port}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{`,
        ),
      ),
    );
    await new Promise((r) => setTimeout(r, 100));
    const shed = await api.call('POST', '/runs', { body });
    expect(shed.status).toBe(503);
    for (const h of holders) h.socket.destroy();
    await Promise.all(holders.map((h) => h.closed));

    api.engine.scheduler.start();
    const done = await waitForRun(api, created.json.id as string);
    expect(done.json.run.status).toBe('done');
    const metrics = await api.call('GET', '/metrics?limit=1000');
    expect(metrics.json.providers[0].calls).toBe(24);
    const rows = JSON.stringify(api.engine.store.db.prepare('SELECT * FROM router_calls').all());
    expect(JSON.parse(rows)).toHaveLength(24);

    // The markers are real: the run's own records hold both.
    const records = await api.call('GET', `/runs/${created.json.id}/responses?limit=100`);
    const recordText = JSON.stringify(records.json);
    expect(recordText).toContain(promptMark);
    expect(recordText).toContain(responseMark);

    for (const [what, text] of [
      ['429 body', queueFull.text],
      ['503 body', shed.text],
      ['router_calls rows', rows],
      ['GET /metrics', metrics.text],
    ] as const) {
      expect(text, what).not.toContain(promptMark);
      expect(text, what).not.toContain(responseMark);
      expect(text, what).not.toContain('the answer is four');
    }
  });
});
