/**
 * API keys: read from the variable the catalog names, sent to the provider, and nowhere else — not
 * in log lines (even at debug, even when the provider echoes the key back in a 401), not in error
 * messages, not in the metrics, not in the catalog a remote worker would receive.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Router } from '../../core/models/router/router.js';
import { redactSecrets } from '../../core/models/providers/secrets.js';
import { FakeProvider } from './fake-provider.js';
import { catalog, host, openaiProvider, request, type TempStore, useFakeProviderAndStore } from './helpers.js';

let fake: FakeProvider;
let ts: TempStore;
useFakeProviderAndStore((f, t) => {
  fake = f;
  ts = t;
});

const KEY = 'sk-live-6f1d2c3b4a5e6f7a8b9c0d1e2f3a4b5c';
const ANTHROPIC_KEY = 'ant-secret-0a9b8c7d6e5f4a3b2c1d';

function capture(): { logger: pino.Logger; text: () => string } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString('utf8'));
      cb();
    },
  });
  return { logger: pino({ level: 'trace' }, sink), text: () => lines.join('') };
}

describe('API keys', () => {
  it('reach the provider and nothing else', async () => {
    const cat = catalog({
      providers: {
        oa: openaiProvider(fake.url, { apiKeyEnv: 'TEST_OA_KEY' }),
        an: { kind: 'anthropic', baseUrl: fake.url, trainsOnData: false, apiKeyEnv: 'TEST_AN_KEY', timeoutMs: 2000 },
        gen: { kind: 'generate', baseUrl: fake.url, trainsOnData: false, apiKeyEnv: 'TEST_OA_KEY', timeoutMs: 2000 },
      },
      models: {
        m: { hosts: [host('oa', 'oa-echo'), host('an', 'an-echo'), host('gen', 'gen-echo'), host('oa', 'oa-ok')] },
      },
    });
    // Providers that echo the key they were given, as OpenAI's 401 body does.
    fake.always('oa-echo', { kind: 'status', status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}.` } } });
    fake.always('an-echo', { kind: 'status', status: 500, body: { error: { message: `upstream rejected x-api-key ${ANTHROPIC_KEY}` } } });
    fake.always('gen-echo', { kind: 'status', status: 429, body: `bad bearer ${KEY}` });
    const log = capture();
    const r = new Router({
      catalog: cat,
      store: ts.store.router,
      logger: log.logger,
      env: { TEST_OA_KEY: KEY, TEST_AN_KEY: ANTHROPIC_KEY },
      cache: { enabled: false },
      // Fail fast once every host is cooling: this test is about what the failures say, not when.
      maxCooldownWaitMs: 0,
    });
    const errors: string[] = [];
    for (let i = 0; i < 6; i++) {
      try {
        await r.generate(request('m', `q${i}`));
      } catch (err) {
        errors.push(String((err as Error).message));
      }
    }
    // The keys did reach the provider...
    expect(fake.arrivals.some((a) => a.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(fake.arrivals.some((a) => a.headers['x-api-key'] === ANTHROPIC_KEY)).toBe(true);
    // ...and the failures were logged, without them.
    r.flush();
    const logged = log.text();
    expect(logged).toContain('oa/oa-echo');
    expect(logged).toContain('[redacted]');
    for (const k of [KEY, ANTHROPIC_KEY]) {
      expect(logged).not.toContain(k);
      expect(errors.join('\n')).not.toContain(k);
      expect(JSON.stringify(r.metrics())).not.toContain(k);
      expect(JSON.stringify(r.posture())).not.toContain(k);
      expect(JSON.stringify(cat.data)).not.toContain(k);
    }
    const dump = ts.store.db.prepare('SELECT * FROM router_calls').all();
    expect(JSON.stringify(dump)).not.toContain(KEY);
    await r.close();
  });

  it('a missing key makes its hosts unroutable, named by the variable only', async () => {
    const cat = catalog({
      providers: { oa: openaiProvider(fake.url, { apiKeyEnv: 'TEST_MISSING_KEY' }) },
      models: { m: { hosts: [host('oa', 'x')] } },
    });
    const r = new Router({ catalog: cat, store: ts.store.router, logger: pino({ level: 'silent' }), env: {} });
    expect(r.serves('m')).toBe(false);
    expect(r.posture().models[0]!.hosts[0]).toMatchObject({ state: 'no_key', reason: 'TEST_MISSING_KEY is not set' });
    await expect(r.generate(request('m'))).rejects.toMatchObject({ code: 'no_host' });
    expect(fake.count()).toBe(0);
    await r.close();
  });

  it('redacts key-shaped strings the router has never seen', () => {
    expect(redactSecrets('key sk-proj-abcdefghijklmnop and Bearer abc.def.ghijklmnop')).toBe('key [redacted] and [redacted]');
    expect(redactSecrets('nothing secret here')).toBe('nothing secret here');
  });
});
