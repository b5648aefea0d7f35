/**
 * The router's settings: its catalog and store, the profile and privacy lock calls default to, the
 * prompt cache, how many hosts a call may try and how long it waits for cooling or down hosts,
 * cooldowns, budget reservations, metrics retention and the write-behind's pace, and the clock,
 * randomness and host clients that tests inject. Each says its default.
 * Runs on: Node (core).
 */
import type { Logger } from 'pino';
import type { PrivacyMode } from '../../domain.js';
import type { RouterStore } from '../../store/router-store.js';
import type { Catalog } from '../catalog.js';
import type { HostClient } from '../providers/host-client.js';
import type { CooldownPolicy } from './host-health.js';

export interface RouterOptions {
  catalog: Catalog;
  /** Where the prompt cache, metrics and budget windows live: the store's router room, `store.router` (default: an in-memory database of its own). */
  store?: RouterStore | undefined;
  /** Builds the client for a provider (tests inject fakes for hosts outside the machine). */
  hostClientFor?: ((providerName: string, apiKey: string | undefined) => HostClient) | undefined;
  /** The profile whose keys and budgets apply to calls that name none (default: PANOPTES_PROFILE, else `default`). */
  profile?: string | undefined;
  /** Locks every call to this privacy mode (default: PANOPTES_PRIVACY_LOCK, else none). */
  privacyLock?: PrivacyMode | null | undefined;
  /** Where API keys are read (default process.env). */
  env?: NodeJS.ProcessEnv | undefined;
  /** Wall clock for cooldowns, budget windows, cache expiry and metrics (tests inject one). */
  now?: (() => number) | undefined;
  /** Prompt cache: on by default; a TTL (default 24 h) and an in-memory LRU size (default 512). */
  cache?: { enabled?: boolean; ttlMs?: number; maxEntries?: number } | undefined;
  /** Hosts one call may try (default: all hosts of its model). */
  maxHostTriesPerCall?: number | undefined;
  /** The longest a call waits for a cooling host instead of failing (default 30 s). */
  maxCooldownWaitMs?: number | undefined;
  /**
   * How long calls wait for a model whose hosts are all down (refusing connections) before they
   * give up (default 5 minutes). Within it an outage is a pause, not a failure.
   */
  hostPatienceMs?: number | undefined;
  cooldowns?: Partial<CooldownPolicy> | undefined;
  /** Output tokens a call is assumed to spend when it sets no max, for budget reservations (default 1024). */
  budgetOutputTokens?: number | undefined;
  /** Metrics kept this long (default 7 days). */
  metricsRetentionMs?: number | undefined;
  flushMs?: number | undefined;
  flushRows?: number | undefined;
  logger?: Logger | undefined;
  /** Source of the jitter on a down host's rest (default Math.random; tests fix it). */
  random?: (() => number) | undefined;
}
