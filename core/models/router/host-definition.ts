/**
 * A host's definition as the prompt cache sees it: what makes two hosts the same instrument.
 * An answer is the work of one physical model behind one endpoint, so the provider's kind, its base
 * URL, the provider's own model id and every option that can change an answer are hashed together;
 * a logical model moved to another host model, endpoint or provider gets a different hash, and the
 * old host's answers stop matching. What only changes how or when a call is made (pacing, limits,
 * timeouts, prices, keys, privacy posture, notes, a mock's latency and fault injection, a local
 * model's thread count) is left out, so editing it keeps the cache.
 * Runs on: Node (core).
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../canonical-json.js';
import type { ProviderKind, ResolvedHost } from '../catalog.js';

/**
 * Options of each kind that never change an answer that succeeded (only answers that succeeded are
 * cached): every other option, of any kind and any name, is part of the definition.
 */
const ANSWER_NEUTRAL_OPTIONS: Partial<Record<ProviderKind, ReadonlySet<string>>> = {
  mock: new Set(['latencyMs', 'jitterMs', 'errorRate', 'errorKind', 'retryAfterMs']),
  gguf: new Set(['threads']),
};

/** The catalog never changes after parsing, so each resolved host is hashed once. */
const hashes = new WeakMap<ResolvedHost, string>();

/** The hex sha256 of the host's answer-shaping definition (see the header). */
export function hostDefinitionHash(host: ResolvedHost): string {
  const known = hashes.get(host);
  if (known !== undefined) return known;
  const provider = host.providerConfig;
  const neutral = ANSWER_NEUTRAL_OPTIONS[provider.kind];
  // A host's options override its provider's, as the providers read them.
  const merged = { ...(provider.options ?? {}), ...(host.options ?? {}) };
  const options = Object.fromEntries(Object.entries(merged).filter(([k]) => !neutral?.has(k)));
  const definition = { kind: provider.kind, baseUrl: provider.baseUrl ?? null, model: host.model, options };
  const hash = createHash('sha256').update(canonicalJson(definition)).digest('hex');
  hashes.set(host, hash);
  return hash;
}
