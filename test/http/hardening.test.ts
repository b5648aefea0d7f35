import { afterEach, describe, expect, it } from 'vitest';
import { initTelemetry } from '../../core/telemetry.js';
import { writeManifest } from '../helpers/temp.js';
import { TOKEN, openRaw, startApi, type ApiHarness } from './harness.js';

initTelemetry({ defaultLevel: 'silent' });

describe('HTTP hardening', () => {
  let api: ApiHarness;
  afterEach(async () => {
    await api?.close();
  });

  it('requires the bearer token on every route but /health: none, wrong, wrong-length and right', async () => {
    api = await startApi({ startScheduler: false });
    const wrongSameLength = TOKEN.slice(0, -1) + (TOKEN.endsWith('x') ? 'y' : 'x');
    const cases: Array<[string, string, number]> = [
      ['none', '', 401],
      ['not bearer', `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}`, 401],
      ['wrong, same length', `Bearer ${wrongSameLength}`, 401],
      ['wrong, one character', 'Bearer x', 401],
      ['wrong, 8 KiB', `Bearer ${'a'.repeat(8 * 1024)}`, 401],
      ['right', `Bearer ${TOKEN}`, 200],
      ['right, lower-case scheme', `bearer ${TOKEN}`, 200],
    ];
    for (const path of ['/stats', '/runs', '/runs/x/stats', '/metrics']) {
      for (const [name, authorization, status] of cases) {
        const res = await api.call('GET', path, { headers: { authorization } });
        const expected = status === 200 && path === '/runs/x/stats' ? 404 : status;
        expect(res.status, `${path}: ${name}`).toBe(expected);
        if (expected === 401) {
          expect(res.json.error.code).toBe('unauthorized');
          expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
        }
      }
    }
    expect((await api.call('POST', '/runs', { headers: { authorization: '' }, body: {} })).status).toBe(401);
    expect((await api.call('GET', '/health', { headers: { authorization: '' } })).status).toBe(200);
  });

  it('refuses a foreign Host or a cross-origin Origin with 403 (DNS rebinding, CSRF)', async () => {
    api = await startApi({ startScheduler: false, http: { allowedHosts: ['panoptes.lan'] } });
    const p = api.port;
    const cases: Array<[Record<string, string>, number]> = [
      [{ host: `127.0.0.1:${p}` }, 200],
      [{ host: `localhost:${p}` }, 200],
      [{ host: `LOCALHOST:${p}` }, 200],
      [{ host: `[::1]:${p}` }, 200],
      [{ host: `panoptes.lan:${p}` }, 200],
      [{ host: `evil.example:${p}` }, 403],
      [{ host: 'evil.example' }, 403],
      [{ host: `127.0.0.1.evil.example:${p}` }, 403],
      [{ host: `127.0.0.1:${p}`, origin: `http://127.0.0.1:${p}` }, 200],
      [{ host: `localhost:${p}`, origin: `http://localhost:${p}` }, 200],
      [{ host: `127.0.0.1:${p}`, origin: 'http://evil.example' }, 403],
      [{ host: `127.0.0.1:${p}`, origin: `http://localhost:${p}` }, 403],
      [{ host: `127.0.0.1:${p}`, origin: `http://127.0.0.1:${p + 1}` }, 403],
      [{ host: `127.0.0.1:${p}`, origin: 'null' }, 403],
      [{ host: `127.0.0.1:${p}`, origin: `file://127.0.0.1:${p}` }, 403],
    ];
    for (const [headers, status] of cases) {
      for (const path of ['/stats', '/health']) {
        const res = await api.call('GET', path, { headers });
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(status);
        if (status === 403) expect(res.json.error.code).toBe('forbidden');
      }
    }
    // The guard runs before authentication: a rebinding page learns nothing, even with no token.
    expect((await api.call('GET', '/stats', { headers: { host: 'evil.example', authorization: '' } })).status).toBe(403);
  });

  it('answers 413 to a body over the cap, before reading it, and stores nothing', async () => {
    api = await startApi({ startScheduler: false, http: { bodyLimit: 2048 } });
    const manifest = writeManifest(api.dir, 3);
    const big = { manifest, models: ['fast'], epochs: 1, padding: 'x'.repeat(4096) };
    const res = await api.call('POST', '/runs', { body: big });
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe('payload_too_large');

    // A declared length over the cap is refused from the headers alone.
    const raw = await openRaw(
      api.port,
      `POST /runs HTTP/1.1\r\nHost: 127.0.0.1:${api.port}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{`,
    );
    await raw.closed;
    expect(raw.received()).toMatch(/^HTTP\/1\.1 413/);
    expect((await api.call('GET', '/runs')).json.runs).toEqual([]);
  });

  it('cuts off a slowloris client that dribbles its headers', async () => {
    api = await startApi({ startScheduler: false, http: { headersTimeoutMs: 500, timeoutCheckIntervalMs: 100 } });
    const raw = await openRaw(api.port, `GET /stats HTTP/1.1\r\nHost: 127.0.0.1:${api.port}\r\n`);
    // One header line every 100 ms, for at most 5 s: the server must hang up well before that.
    let sent = 0;
    const drip = setInterval(() => {
      if (raw.socket.writable && sent < 50) raw.socket.write(`X-Drip-${sent++}: a\r\n`);
    }, 100);
    try {
      const lifetime = await raw.closed;
      expect(lifetime).toBeLessThan(2500);
      expect(sent).toBeLessThan(25);
      expect(raw.received()).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      clearInterval(drip);
    }
    // The server is still serving.
    expect((await api.call('GET', '/stats')).status).toBe(200);
  });

  it('cuts off a client that sends its body too slowly', async () => {
    api = await startApi({ startScheduler: false, http: { requestTimeoutMs: 600, headersTimeoutMs: 600, timeoutCheckIntervalMs: 100 } });
    const raw = await openRaw(
      api.port,
      `POST /runs HTTP/1.1\r\nHost: 127.0.0.1:${api.port}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
    );
    const lifetime = await raw.closed;
    expect(lifetime).toBeLessThan(3000);
    expect(raw.received()).toMatch(/^HTTP\/1\.1 408/);
  });

  it('sheds requests beyond the in-flight cap with 503 + Retry-After, and serves again once they end', async () => {
    api = await startApi({ startScheduler: false, http: { maxConcurrent: 3, requestTimeoutMs: 20_000 } });
    // Three uploads that never finish hold the three slots.
    const holders = await Promise.all(
      [0, 1, 2].map(() =>
        openRaw(
          api.port,
          `POST /runs HTTP/1.1\r\nHost: 127.0.0.1:${api.port}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{`,
        ),
      ),
    );
    await new Promise((r) => setTimeout(r, 100));
    const burst = await Promise.all(Array.from({ length: 40 }, () => api.call('GET', '/stats')));
    for (const res of burst) {
      expect(res.status).toBe(503);
      expect(res.json.error.code).toBe('overloaded');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    for (const h of holders) h.socket.destroy();
    await Promise.all(holders.map((h) => h.closed));
    await new Promise((r) => setTimeout(r, 50));
    const after = await Promise.all(Array.from({ length: 3 }, () => api.call('GET', '/stats')));
    expect(after.map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it('answers 429 + Retry-After once the queue holds the cap of runs, under a burst of POSTs', async () => {
    api = await startApi({ startScheduler: false, http: { maxQueuedRuns: 3 } });
    const manifest = writeManifest(api.dir, 50);
    const body = { manifest, models: ['fast'], epochs: 1 };
    const burst = await Promise.all(Array.from({ length: 12 }, () => api.call('POST', '/runs', { body })));
    const created = burst.filter((r) => r.status === 201);
    const refused = burst.filter((r) => r.status === 429);
    expect(created.length + refused.length).toBe(12);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(created.length).toBeLessThanOrEqual(3);
    for (const r of refused) {
      expect(r.json.error.code).toBe('too_many_queued_runs');
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // Sequential creations fill the queue to exactly the cap, then are refused.
    for (let i = created.length; i < 3; i++) expect((await api.call('POST', '/runs', { body })).status).toBe(201);
    expect((await api.call('POST', '/runs', { body })).status).toBe(429);
    expect((await api.call('GET', '/runs?status=queued')).json.runs).toHaveLength(3);

    // Once the scheduler drains the queue there is room again.
    api.engine.scheduler.start();
    await api.engine.scheduler.finishAll();
    expect((await api.call('POST', '/runs', { body })).status).toBe(201);
  });

});
