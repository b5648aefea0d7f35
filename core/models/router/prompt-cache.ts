/**
 * The prompt cache: exact match on the sha256 of the whole normalised request and the host that
 * answered it, so no parameter that changes an answer is left out of the key: the logical model,
 * the physical host (its provider's own model id) and a hash of the host's definition (provider
 * kind, base URL, the options that change answers: host-definition.ts), every message (role and
 * content), every sampling parameter (temperature, top_p, seed, stop, the reasoning effort and
 * thinking budget when set, and the output cap the host runs the call under), the privacy mode
 * the call runs under (an answer produced with privacy off is never served to a strict call), and the epoch unless the run shares answers across epochs.
 * A call has one key per host of its model that it may use, looked up in catalog order: an answer
 * of any of them is an answer of the same instrument, and an answer of a host the model no longer
 * has (moved to another host model, endpoint or provider) is never served. Only successful calls
 * are stored, under the key of the host that answered, with a TTL; lookups go to an in-memory
 * LRU, then SQLite. Callers skip the cache entirely for `skipPromptCache` calls. No prompt text is
 * stored: only the key and the answer.
 *
 * Within a run each (vignette, epoch) is its own sample: an answer remembers the sample that
 * produced it, and a run is served only from earlier runs, from the same sample (a job redelivered
 * after a crash), or, when the run shares answers across epochs, from another epoch; never from a
 * sibling vignette with the same prompt in the same epoch, which would make a run's totals depend
 * on which copy landed first.
 * Runs on: Node (core).
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { PrivacyMode, Usage } from '../../domain.js';
import type { RouterStore } from '../../store/router-store.js';
import { outputCapOf, type ResolvedHost } from '../catalog.js';
import type { ModelRequest } from '../model-client.js';
import { hostDefinitionHash } from './host-definition.js';
import type { WriteBehind } from './write-behind.js';

/** Bump when the key's shape changes, so old entries stop matching. */
const KEY_VERSION = 2;

export interface CachedAnswer {
  text: string;
  usage: Usage;
  host: string;
  finishReason?: string;
  /** The sample that produced the answer, when the call named one. */
  origin?: SampleOrigin;
}

export interface SampleOrigin {
  runId: string;
  epoch: number | null;
  vignetteId: string | null;
}

/** The sample a call poses, if it names its run. */
export function sampleOf(request: ModelRequest): SampleOrigin | undefined {
  if (request.runId === undefined) return undefined;
  return { runId: request.runId, epoch: request.epoch ?? null, vignetteId: request.vignette?.id ?? null };
}

/** Whether an answer produced for `origin` may answer `request` (see the header: never a sibling of the same run). */
export function mayServe(origin: SampleOrigin | undefined, request: ModelRequest): boolean {
  if (origin === undefined || request.runId === undefined || origin.runId !== request.runId) return true;
  const epoch = request.epoch ?? null;
  if (origin.vignetteId === (request.vignette?.id ?? null) && origin.epoch === epoch) return true;
  return request.shareCacheAcrossEpochs === true && origin.epoch !== epoch;
}

/** What a call asks, whichever host answers it: a canonical array, as JSON. */
function requestPart(request: ModelRequest, privacy: PrivacyMode): string {
  const s = request.sampling;
  return JSON.stringify([
    request.model,
    request.messages.map((m) => [m.role, m.content]),
    s.temperature ?? null,
    s.topP ?? null,
    s.seed ?? null,
    s.stop ?? null,
    privacy,
    request.shareCacheAcrossEpochs ? null : (request.epoch ?? null),
    // Reasoning settings only when set, so the keys of calls without them stay what they were.
    ...(s.reasoningEffort === undefined && s.thinkingBudget === undefined ? [] : [['reasoning', s.reasoningEffort ?? null, s.thinkingBudget ?? null]]),
  ]);
}

/** The key of a call answered by `host`: hex sha256 over the host's part and the request's. */
function keyOf(asked: string, maxTokens: number | undefined, host: ResolvedHost): string {
  const answeredBy = JSON.stringify([KEY_VERSION, host.model, hostDefinitionHash(host), outputCapOf(host, maxTokens)]);
  return createHash('sha256').update(answeredBy).update(asked).digest('hex');
}

/** The cache key of a call answered by `host`: everything that shapes the answer (see the header). */
export function promptCacheKey(request: ModelRequest, privacy: PrivacyMode, host: ResolvedHost): string {
  return keyOf(requestPart(request, privacy), request.sampling.maxTokens, host);
}

/**
 * The keys of a call, one per host of its model it may be answered by, in catalog order: under
 * strict privacy only the privacy-safe hosts (a host since marked unsafe serves no strict call).
 */
export function promptCacheKeys(request: ModelRequest, privacy: PrivacyMode, hosts: readonly ResolvedHost[]): Map<string, string> {
  const asked = requestPart(request, privacy);
  const eligible = privacy === 'strict' ? hosts.filter((h) => h.privacySafe) : hosts;
  return new Map(eligible.map((h) => [h.id, keyOf(asked, request.sampling.maxTokens, h)]));
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

  /** The first answer under the call's keys (in host order) that may serve it. */
  lookup(keys: ReadonlyMap<string, string>, request: ModelRequest): CachedAnswer | undefined {
    for (const key of keys.values()) {
      const hit = this.get(key);
      if (hit && mayServe(hit.origin, request)) return hit;
    }
    return undefined;
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
