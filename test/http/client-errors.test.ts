/**
 * What Node's HTTP parser and Fastify's limits refuse is answered in the server's one error shape
 * (`{"ok": false, "error": {"code", "message", "retryable"}}`), not Node's or Fastify's own body:
 * 408 for a request too slow to arrive, 413 for a body over the cap (sent, or only declared), 431
 * for headers too large, 400 for malformed HTTP. Over real TCP on 127.0.0.1, with raw sockets.
 * Runs on: Node (tests).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { initTelemetry } from '../../core/telemetry.js';
import { TOKEN, openRaw, startApi, type ApiHarness } from './harness.js';

initTelemetry({ defaultLevel: 'silent' });

/** The status and the JSON body of a raw HTTP answer. */
function answer(raw: string): { status: number; contentType: string; body: unknown } {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const contentType = /^content-type: (.+)$/im.exec(head)?.[1] ?? '';
  return { status, contentType, body: JSON.parse(body) as unknown };
}

const shape = (code: string, retryable: boolean) => ({ ok: false, error: { code, message: expect.any(String) as unknown, retryable } });

describe('client errors in the one error shape', () => {
  let api: ApiHarness;
  afterEach(async () => {
    await api?.close();
  });

  it('408 for a body that does not arrive in time', async () => {
    api = await startApi({ startScheduler: false, http: { requestTimeoutMs: 600, headersTimeoutMs: 600, timeoutCheckIntervalMs: 100 } });
    const raw = await openRaw(api.port, `POST /runs HTTP/1.1\r\nHost: 127.0.0.1:${api.port}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
    await raw.closed;
    expect(answer(raw.received())).toEqual({ status: 408, contentType: 'application/json; charset=utf-8', body: shape('request_timeout', true) });
  });

  it('413 for a body over the cap, sent or only declared', async () => {
    api = await startApi({ startScheduler: false, http: { bodyLimit: 2048 } });
    const sent = await api.call('POST', '/runs', { body: { manifest: 'm.jsonl', models: ['fast'], epochs: 1, padding: 'x'.repeat(4096) } });
    expect({ status: sent.status, body: sent.json as unknown }).toEqual({ status: 413, body: shape('payload_too_large', false) });
    const raw = await openRaw(api.port, `POST /runs HTTP/1.1\r\nHost: 127.0.0.1:${api.port}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{`);
    await raw.closed;
    expect(answer(raw.received())).toMatchObject({ status: 413, body: shape('payload_too_large', false) });
  });

  it('431 for headers too large, 400 for malformed HTTP; the server serves on', async () => {
    api = await startApi({ startScheduler: false });
    const big = await openRaw(api.port, `GET /stats HTTP/1.1\r\nHost: 127.0.0.1:${api.port}\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    await big.closed;
    expect(answer(big.received())).toEqual({ status: 431, contentType: 'application/json; charset=utf-8', body: shape('headers_too_large', false) });
    const malformed = await openRaw(api.port, `GET /stats HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n`);
    await malformed.closed;
    expect(answer(malformed.received())).toEqual({ status: 400, contentType: 'application/json; charset=utf-8', body: shape('bad_request', false) });
    expect((await api.call('GET', '/stats')).status).toBe(200);
  });
});
