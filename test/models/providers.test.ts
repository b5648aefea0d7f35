/**
 * The HTTP providers against a fake server: answers and usage normalised, and every failure mapped
 * to the right PanoptesError (code, retryable, Retry-After), with exactly one request per call (the
 * SDKs' own retries are off).
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider, ResolvedHost } from '../../core/models/catalog.js';
import { AnthropicHostClient } from '../../core/models/providers/anthropic.js';
import { ProviderFailure, parseRetryAfter } from '../../core/models/providers/failures.js';
import { GenerateHostClient } from '../../core/models/providers/generate.js';
import type { HostClient } from '../../core/models/providers/host-client.js';
import { OpenAIHostClient } from '../../core/models/providers/openai.js';
import { failureOf } from '../helpers/failure-of.js';
import { FakeProvider } from './fake-provider.js';
import { request } from './helpers.js';

let fake: FakeProvider;
beforeAll(async () => {
  fake = await new FakeProvider().start();
});
afterAll(async () => {
  await fake.stop();
});

function hostOf(provider: Provider, model: string): ResolvedHost {
  return { provider: 'p', model, contextWindow: 8000, id: `p/${model}`, providerConfig: provider, privacySafe: true };
}

type Kind = 'openai' | 'anthropic' | 'generate';
const kinds: Kind[] = ['openai', 'anthropic', 'generate'];

function clientFor(kind: Kind, timeoutMs = 2000): { client: HostClient; provider: Provider } {
  const base = kind === 'generate' ? fake.url : `${fake.url}${kind === 'openai' ? '/v1' : ''}`;
  const provider: Provider = { kind, baseUrl: base, trainsOnData: false, timeoutMs };
  const client =
    kind === 'openai'
      ? new OpenAIHostClient('p', provider, 'sk-test-key-123456')
      : kind === 'anthropic'
        ? new AnthropicHostClient('p', provider, 'sk-ant-test-key-123456')
        : new GenerateHostClient('p', provider, 'gen-test-key-123456');
  return { client, provider };
}

describe.each(kinds)('%s provider', (kind) => {
  it('answers with normalised usage and sends the sampling parameters', async () => {
    const model = `${kind}-ok`;
    fake.next(model, { kind: 'ok', text: 'blue', inputTokens: 20, outputTokens: 5, cachedTokens: 4, reasoningTokens: 2 });
    const { client, provider } = clientFor(kind);
    const res = await client.call(
      hostOf(provider, model),
      request(model, 'Is the sky blue?', {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Is the sky blue?' },
        ],
        sampling: { temperature: 0.5, topP: 0.9, maxTokens: 33, seed: 7, stop: ['END'] },
      }),
    );
    expect(res.text).toBe('blue');
    const sent = fake.arrivals.filter((a) => a.model === model).at(-1)!;
    if (kind === 'openai') {
      expect(res.usage).toEqual({ inputTokens: 20, outputTokens: 5, cachedTokens: 4, reasoningTokens: 2 });
      expect(sent.body).toMatchObject({ temperature: 0.5, top_p: 0.9, max_tokens: 33, seed: 7, stop: ['END'] });
      expect(sent.headers.authorization).toBe('Bearer sk-test-key-123456');
    } else if (kind === 'anthropic') {
      // Anthropic reports cache reads apart from input: normalised input includes them.
      expect(res.usage).toEqual({ inputTokens: 24, outputTokens: 5, cachedTokens: 4 });
      expect(sent.body).toMatchObject({ system: 'Be brief.', temperature: 0.5, top_p: 0.9, max_tokens: 33, stop_sequences: ['END'] });
      expect(sent.headers['x-api-key']).toBe('sk-ant-test-key-123456');
    } else {
      expect(res.usage).toEqual({ inputTokens: 20, outputTokens: 5 });
      expect(sent.body).toMatchObject({ prompt: 'Is the sky blue?', system: 'Be brief.', max_tokens: 33, temperature: 0.5, top_p: 0.9, seed: 7 });
      expect(sent.headers.authorization).toBe('Bearer gen-test-key-123456');
    }
    expect(res.finishReason).toBeTruthy();
  });

  it('maps 429 with Retry-After (seconds) to a retryable rate limit, after one request', async () => {
    const model = `${kind}-429`;
    fake.next(model, { kind: 'status', status: 429, headers: { 'retry-after': '7' }, body: { error: { message: 'slow down' } } });
    const { client, provider } = clientFor(kind);
    const before = fake.count(model);
    const e = await failureOf(client.call(hostOf(provider, model), request(model)));
    expect(e.code).toBe('rate_limited');
    expect(e.retryable).toBe(true);
    expect(e.retryAfterMs).toBe(7000);
    expect(fake.count(model) - before).toBe(1);
  });

  it('maps 429 with Retry-After as an HTTP date', async () => {
    const model = `${kind}-429-date`;
    const at = new Date(Date.now() + 30_000).toUTCString();
    fake.next(model, { kind: 'status', status: 429, headers: { 'retry-after': at } });
    const { client, provider } = clientFor(kind);
    const e = await failureOf(client.call(hostOf(provider, model), request(model)));
    expect(e.code).toBe('rate_limited');
    expect(e.retryAfterMs).toBeGreaterThan(25_000);
    expect(e.retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  it.each([
    [500, undefined, 'server_error', true],
    [503, undefined, 'server_error', true],
    [401, { error: { message: 'bad key' } }, 'auth', false],
    [403, { error: { message: 'no access' } }, 'auth', false],
    [402, { error: { message: 'payment required' } }, 'quota', false],
    [429, { error: { type: 'insufficient_quota', message: 'You exceeded your current quota' } }, 'quota', false],
    [400, { error: { message: 'Your credit balance is too low' } }, 'quota', false],
    [400, { error: { message: "This model's maximum context length is 8192 tokens" } }, 'bad_request', false],
    [400, { error: { message: 'temperature must be <= 2' } }, 'bad_request', false],
    [404, { error: { message: 'model not found' } }, 'bad_request', false],
  ] as const)('maps HTTP %i %j to %s', async (status, body, code, retryable) => {
    const model = `${kind}-${status}-${code}-${JSON.stringify(body ?? '').length}`;
    fake.next(model, { kind: 'status', status, body });
    const { client, provider } = clientFor(kind);
    const before = fake.count(model);
    const e = await failureOf(client.call(hostOf(provider, model), request(model)));
    expect(e.code).toBe(code);
    expect(e.retryable).toBe(retryable);
    expect(fake.count(model) - before).toBe(1);
    if (body && /context/.test(JSON.stringify(body))) expect((e as ProviderFailure).status).toBe(413);
  });

  it('times out on a host that hangs, with one request', async () => {
    const model = `${kind}-hang`;
    fake.next(model, { kind: 'hang' });
    const { client, provider } = clientFor(kind, 300);
    const started = performance.now();
    const e = await failureOf(client.call(hostOf(provider, model), request(model)));
    expect(e.code).toBe('timeout');
    expect(e.retryable).toBe(true);
    expect(performance.now() - started).toBeLessThan(2000);
    expect(fake.count(model)).toBe(1);
  });

  it('maps a dropped connection and a refused port to connection errors', async () => {
    const model = `${kind}-drop`;
    fake.next(model, { kind: 'drop' });
    const { client, provider } = clientFor(kind);
    const e = await failureOf(client.call(hostOf(provider, model), request(model)));
    expect(e.code).toBe('connection');
    expect(e.retryable).toBe(true);

    const closedPort = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    });
    const refused: Provider = { ...provider, baseUrl: `http://127.0.0.1:${closedPort}${kind === 'openai' ? '/v1' : ''}` };
    const c2 = kind === 'openai' ? new OpenAIHostClient('p', refused, 'k') : kind === 'anthropic' ? new AnthropicHostClient('p', refused, 'k') : new GenerateHostClient('p', refused, 'k');
    const e2 = await failureOf(c2.call(hostOf(refused, model), request(model)));
    expect(e2.code).toBe('connection');
  });

  it('reports a cancelled call as cancelled', async () => {
    const model = `${kind}-cancel`;
    fake.next(model, { kind: 'hang' });
    const { client, provider } = clientFor(kind);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const e = await failureOf(client.call(hostOf(provider, model), request(model, 'x', { signal: ac.signal })));
    expect(e.code).toBe('cancelled');
    expect(e.retryable).toBe(false);
  });
});

describe('Retry-After parsing', () => {
  it('reads delta-seconds, fractions and HTTP dates, and ignores junk', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('0.5', now)).toBe(500);
    expect(parseRetryAfter(new Date(now + 90_000).toUTCString(), now)).toBe(90_000);
    expect(parseRetryAfter(new Date(now - 90_000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
