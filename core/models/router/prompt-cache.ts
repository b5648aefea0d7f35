/**
 * The prompt cache: exact match on the sha256 of the whole normalised request,
 * so no parameter that changes an answer is left out of the key: the logical model, every message
 * (role and content), every sampling parameter (temperature, top_p, max tokens, seed, stop), the
 * privacy mode the call runs under (an answer produced with privacy off is never served to a
 * strict call), and the epoch unless the run shares answers across epochs. Only successful calls
 * are stored, with a TTL; lookups go to an in-memory LRU, then SQLite. Callers skip the cache
 * entirely for `noStore` calls. No prompt text is stored: only the key and the answer.
 * Runs on: Node (core).
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { PrivacyMode, Usage } from '../../domain.js';
import type { RouterStore } from '../../store/router-store.js';
import type { ModelRequest } from '../model-client.js';
import type { WriteBehind } from './write-behind.js';

/** Bump when the key's shape changes, so old entries stop matching. */
const KEY_VERSION = 1;

export interface CachedAnswer {
  text: string;
  usage: Usage;
  host: string;
  finishReason?: string;
}

/** The cache key of a call: hex sha256 over a canonical array of everything that shapes the answer. */
export function promptCacheKey(request: ModelRequest, privacy: PrivacyMode): string {
  const s = request.sampling;
  const canonical = [
    KEY_VERSION,
    request.model,
    request.messages.map((m) => [m.role, m.content]),
    s.temperature ?? null,
    s.topP ?? null,
    s.maxTokens ?? null,
    s.seed ?? null,
    s.stop ?? null,
    privacy,
    request.shareCacheAcrossEpochs ? null : (request.epoch ?? null),
  ];
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

export interface PromptCacheOptions {
  store: RouterStore;
  writer: WriteBehind;
  ttlMs: number;
  maxEntries: number;
  now: () => number;
}

interface Entry {
  answer: CachedAnswer;
  expiresAt: number;
}

export class PromptCache {
  private readonly lru: LRUCache<string, Entry>;

  constructor(private readonly opts: PromptCacheOptions) {
    this.lru = new LRUCache<string, Entry>({ max: opts.maxEntries });
  }

  get(key: string): CachedAnswer | undefined {
    const now = this.opts.now();
    const hot = this.lru.get(key);
    if (hot) {
      if (hot.expiresAt > now) return hot.answer;
      this.lru.delete(key);
    }
    const row = this.opts.store.getCached(key, now);
    if (!row) return undefined;
    const answer = JSON.parse(row.value) as CachedAnswer;
    this.lru.set(key, { answer, expiresAt: row.expiresAt });
    return answer;
  }

  put(key: string, answer: CachedAnswer): void {
    const createdAt = this.opts.now();
    const expiresAt = createdAt + this.opts.ttlMs;
    this.lru.set(key, { answer, expiresAt });
    this.opts.writer.cacheEntry({ key, value: JSON.stringify(answer), createdAt, expiresAt });
  }
}
