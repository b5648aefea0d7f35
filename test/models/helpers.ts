/**
 * Test helpers for the router: a real SQLite store in a temp dir, catalogs built inline, a
 * controllable clock, and a request builder.
 * Runs on: Node (tests).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { PrivacyMode, Sampling } from '../../core/domain.js';
import { Catalog } from '../../core/models/catalog.js';
import type { ModelRequest } from '../../core/models/model-client.js';
import { Router, type RouterOptions } from '../../core/models/router/router.js';
import { Store } from '../../core/store/store.js';
import { afterEach, beforeEach } from 'vitest';
import { FakeProvider } from './fake-provider.js';

export interface TempStore {
  store: Store;
  dir: string;
  cleanup(): void;
}

export function tempStore(): TempStore {
  const dir = mkdtempSync(join(tmpdir(), 'panoptes-'));
  const store = new Store(join(dir, 'panoptes.db'));
  return {
    store,
    dir,
    cleanup() {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function catalog(data: unknown): Catalog {
  return Catalog.parse(data, 'test');
}

/** A clock tests move by hand. */
export function manualClock(start = Date.UTC(2026, 0, 1)): { now: () => number; advance(ms: number): void; set(t: number): void } {
  let t = start;
  return {
    now: () => t,
    advance(ms) {
      t += ms;
    },
    set(v) {
      t = v;
    },
  };
}

export function request(model: string, prompt = 'Is the sky blue?', extra: Partial<ModelRequest> & { sampling?: Sampling; privacy?: PrivacyMode } = {}): ModelRequest {
  return {
    model,
    messages: [{ role: 'user', content: prompt }],
    sampling: {},
    privacy: 'strict',
    skipPromptCache: false,
    epoch: 1,
    ...extra,
  };
}

/** A router with a silent logger unless one is given; `env` defaults to an empty environment. */
export function router(opts: Partial<RouterOptions> & { catalog: Catalog }): Router {
  return new Router({ logger: pino({ level: 'silent' }), env: {}, ...opts });
}

/** An OpenAI-compatible provider entry pointing at a fake server. */
export function openaiProvider(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { kind: 'openai', baseUrl: `${url}/v1`, trainsOnData: false, timeoutMs: 2000, ...extra };
}

/** A host entry. */
export function host(provider: string, model: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { provider, model, contextWindow: 128000, inputPerMTok: 1, outputPerMTok: 2, ...extra };
}

/**
 * Gives each test of the file a fresh fake provider and temp store, handed to `set` before the test
 * and stopped and removed after it.
 */
export function useFakeProviderAndStore(set: (fake: FakeProvider, ts: TempStore) => void): void {
  let current: { fake: FakeProvider; ts: TempStore } | undefined;
  beforeEach(async () => {
    current = { fake: await new FakeProvider().start(), ts: tempStore() };
    set(current.fake, current.ts);
  });
  afterEach(async () => {
    await current?.fake.stop();
    current?.ts.cleanup();
  });
}
