/**
 * The router: a ModelClient over the catalog. A call names a logical model; the router
 * answers from the prompt cache when it can, else lets the HostPicker pick a host and calls it
 * under the provider's pacing and budget. A failure (429, 5xx, timeout, dropped connection, empty
 * answer, refused key, exhausted quota, a host without room for the prompt) penalises that host and
 * bounces the call to another host of the same logical model, each host at most once per call,
 * within a budget of host tries. When nothing is eligible the error says why for every host and when
 * the soonest one returns; when the remaining hosts are only cooling down briefly, the call waits.
 * Every host try and every cache hit is a metric. Providers never retry on their own: this loop is
 * the only one.
 * Runs on: Node (core).
 */
import { setImmediate, setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { estCostUsd } from '../../common/cost.js';
import { PanoptesError, toPanoptesError, type BilledTries, type HostWait, type PrivacyMode, type Usage } from '../../domain.js';
import { Connection } from '../../store/connection.js';
import { RouterStore } from '../../store/router-store.js';
import { componentLogger, logger as rootLogger } from '../../telemetry.js';
import { outputCapOf, priceOfHost, type Catalog, type DailyBudget, type ResolvedHost } from '../catalog.js';
import type { ModelClient, ModelRequest, ModelResponse, Unavailable } from '../model-client.js';
import { addBilled, emptyOutput } from '../providers/failures.js';
import type { HostClient } from '../providers/host-client.js';
import { withBaseUrlFromEnv } from '../providers/base-url.js';
import { createHostClient } from '../providers/index.js';
import { readApiKey } from '../providers/secrets.js';
import { budgetWindows } from './budget-windows.js';
import { BudgetGuard, BUDGET_WINDOW_MS, type Reservation } from './budget-guard.js';
import { hostTryRow, cacheHitRow } from './call-rows.js';
import { cancelled, failsOver, nothingEligible, outOfPatience, untilText, withSoonest } from './call-failures.js';
import { HostHealth } from './host-health.js';
import { metricsReport } from './metrics-report.js';
import { ProviderPacer } from './pacer.js';
import { postureReport, rosterReport, type PostureSource } from './posture-report.js';
import { effectivePrivacy, privacyLockFromEnv } from './privacy.js';
import { probeCall, probeTargets } from './probe.js';
import { PromptCache, promptCacheKeys, sampleOf } from './prompt-cache.js';
import type {
  HostState,
  MetricsQuery,
  MetricsReport,
  PostureReport,
  ProbeOutcome,
  ProbeReport,
  ProbeResult,
  RosterReport,
} from './router-report.js';
import type { RouterOptions } from './router-options.js';
import { HostPicker, type PickRequest, type ProviderGate } from './host-picker.js';
import { estimatePromptTokens, promptTokenBound, roughTokens } from './token-estimate.js';
import { WriteBehind } from './write-behind.js';

export type { RouterOptions } from './router-options.js';

/** What the router keeps per (profile, provider) once it is first used; the pacer is the provider's, shared by every profile. */
interface ProviderRuntime {
  client: HostClient;
  pacer: ProviderPacer | undefined;
  budget: DailyBudget | undefined;
}

const DAY_MS = 24 * 60 * 60_000;
/** Waits for cooling hosts within one call, at most (each at most `maxCooldownWaitMs`). */
const MAX_WAITS_PER_CALL = 8;
export const DEFAULT_HOST_PATIENCE_MS = 5 * 60_000;

export class Router implements ModelClient {
  readonly catalog: Catalog;
  readonly profile: string;
  readonly privacyLock: PrivacyMode | null;
  private readonly env: NodeJS.ProcessEnv;
  private readonly now: () => number;
  private readonly log: Logger;
  /** The in-memory database the router made for itself when given no store; closed with the router. */
  private readonly ownConnection: Connection | undefined;
  private readonly routerStore: RouterStore;
  private readonly writer: WriteBehind;
  private readonly cache: PromptCache | undefined;
  private readonly health: HostHealth;
  private readonly hostPicker: HostPicker;
  private readonly budget: BudgetGuard;
  /** Keyed by `profile NUL provider`: a profile may bring its own key and budget. */
  private readonly providers = new Map<string, ProviderRuntime>();
  private readonly pacers = new Map<string, ProviderPacer | undefined>();
  private readonly hostClientFor: (providerName: string, apiKey: string | undefined) => HostClient;
  private readonly maxHostTries: number;
  private readonly maxCooldownWaitMs: number;
  private readonly hostPatienceMs: number;
  private readonly budgetOutputTokens: number;
  /** Per logical model: the smallest context window of its hosts (the catalog never changes). */
  private readonly smallestWindow = new Map<string, number>();
  /** The last probe of each host in this process, by host id. */
  private readonly probes = new Map<string, ProbeOutcome>();
  private closed = false;

  constructor(opts: RouterOptions) {
    this.catalog = opts.catalog;
    this.env = opts.env ?? process.env;
    this.profile = opts.profile ?? (this.env.PANOPTES_PROFILE?.trim() || 'default');
    this.privacyLock = opts.privacyLock === undefined ? privacyLockFromEnv(this.env) : opts.privacyLock;
    this.now = opts.now ?? Date.now;
    this.log = componentLogger(opts.logger ?? rootLogger(), 'router');
    if (opts.store) {
      this.ownConnection = undefined;
      this.routerStore = opts.store;
    } else {
      this.ownConnection = new Connection(':memory:');
      this.routerStore = new RouterStore(this.ownConnection);
    }
    this.writer = new WriteBehind(this.routerStore, { flushMs: opts.flushMs, maxRows: opts.flushRows, logger: this.log });
    if (opts.cache?.enabled ?? true) {
      this.cache = new PromptCache({
        store: this.routerStore,
        writer: this.writer,
        ttlMs: opts.cache?.ttlMs ?? DAY_MS,
        maxEntries: opts.cache?.maxEntries ?? 512,
        now: this.now,
      });
    }
    this.health = new HostHealth(opts.cooldowns, opts.random);
    this.budget = new BudgetGuard({
      store: this.routerStore,
      writer: this.writer,
      now: this.now,
      budgetOf: (provider, profile) => this.catalog.termsOf(provider, profile).dailyBudget,
    });
    this.maxHostTries = opts.maxHostTriesPerCall ?? Infinity;
    this.maxCooldownWaitMs = opts.maxCooldownWaitMs ?? 30_000;
    this.hostPatienceMs = opts.hostPatienceMs ?? DEFAULT_HOST_PATIENCE_MS;
    this.budgetOutputTokens = opts.budgetOutputTokens ?? 1024;
    this.hostPicker = new HostPicker({
      catalog: this.catalog,
      health: this.health,
      now: this.now,
      briefWaitMs: this.maxCooldownWaitMs,
      gate: (host, request) => this.gate(host, request),
    });
    this.hostClientFor =
      opts.hostClientFor ?? ((name, key) => createHostClient(name, withBaseUrlFromEnv(name, this.catalog.data.providers[name]!, this.env), key));
    const now = this.now();
    try {
      this.routerStore.prune(now, now - (opts.metricsRetentionMs ?? 7 * DAY_MS), Math.floor((now - BUDGET_WINDOW_MS) / 60_000));
    } catch (err) {
      // Pruning old advisory rows can wait for the next start: another process stalled inside a
      // transaction must not stop this one from opening (a takeover of its run needs exactly that).
      if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
    }
  }

  /** The model is in the catalog and some host of it has what it needs to be called (its key). */
  serves(model: string): boolean {
    return this.catalog.hosts(model).some((h) => this.keyState(h.provider, this.profile) !== 'missing');
  }

  unavailableReason(model: string): Unavailable | undefined {
    const hosts = this.catalog.hosts(model);
    if (hosts.length === 0) return { kind: 'not_in_catalog' };
    if (this.serves(model)) return undefined;
    const keyEnvs = [...new Set(hosts.map((h) => this.catalog.termsOf(h.provider, this.profile).apiKeyEnv).filter((k) => k !== undefined))];
    return { kind: 'no_key', keyEnvs };
  }

  // ---- Calls -------------------------------------------------------------------------------------

  async generate(request: ModelRequest): Promise<ModelResponse> {
    const hosts = this.catalog.hosts(request.model);
    if (hosts.length === 0) {
      throw new PanoptesError('no_host', `model "${request.model}" is not in the catalog`, { where: 'model' });
    }
    const profile = request.profile ?? this.profile;
    const privacy = effectivePrivacy(request.privacy, this.privacyLock);
    const cacheKeys = request.skipPromptCache || !this.cache ? undefined : promptCacheKeys(request, privacy, hosts);
    if (cacheKeys !== undefined) {
      const hit = this.cache!.lookup(cacheKeys, request);
      if (hit) {
        // A turn of the event loop, as a real call's I/O would give: a sweep answered from the
        // cache must not starve timers, sockets and the UI the engine shares its loop with.
        await setImmediate();
        return this.answerFromCache(request, profile, hit);
      }
    }
    const maxOutput = request.sampling.maxTokens ?? 0;
    // The free bound settles almost every call; the tokenizer runs only for prompts near a window's size.
    const bound = promptTokenBound(request.messages);
    const pickRequest: PickRequest = {
      profile,
      privacy,
      promptTokens: bound + maxOutput <= this.smallestWindowOf(request.model, hosts) ? bound : await estimatePromptTokens(request.messages),
      maxOutput,
      estimate: { inputTokens: roughTokens(request), outputTokens: request.sampling.maxTokens ?? this.budgetOutputTokens },
    };
    const budget = Math.min(this.maxHostTries, hosts.length);
    const tried = new Set<string>();
    // Tries a provider billed without an answer (empty ones): on the answer, or on the error thrown.
    const billedBefore: BilledTries = { calls: 0, inputTokens: 0, outputTokens: 0 };
    let last: PanoptesError | undefined;
    let waits = 0;
    let waiting: HostWait | null = null;
    const waitForHost = (w: HostWait | null) => {
      if (w?.host === waiting?.host) return;
      waiting = w;
      request.onHostWait?.(w);
    };
    try {
      while (tried.size < budget) {
        if (request.signal?.aborted) throw cancelled(request.model);
        const pick = this.hostPicker.pick(request.model, pickRequest, tried);
        if (pick.kind === 'wait') {
          // Every host the call could use is resting; one that is down is waited for, within patience.
          const since = this.health.downSince(pick.host.id);
          if (since !== null) {
            if (this.now() - since > this.hostPatienceMs) throw outOfPatience(pick.host, since, this.hostPatienceMs, last);
            waitForHost({ host: pick.host.id, since });
            await this.waitFor(Math.min(pick.until, since + this.hostPatienceMs + 1), request.signal, request.model);
            continue;
          }
          if (waits < MAX_WAITS_PER_CALL) {
            waits += 1;
            await this.waitFor(pick.until, request.signal, request.model);
            continue;
          }
        }
        if (pick.kind !== 'host') throw nothingEligible(request.model, privacy, pick, last, this.now());
        tried.add(pick.host.id);
        try {
          const res = await this.tryHost(pick.host, request, pickRequest, cacheKeys?.get(pick.host.id));
          return billedBefore.calls > 0 ? { ...res, billedBefore } : res;
        } catch (err) {
          last = toPanoptesError(err);
          if (last.billed) addBilled(billedBefore, last.billed);
          if (!failsOver(last)) throw last;
          // A host that refused the connection may be tried again once it has rested: the call
          // waits for it (above) rather than failing, until the outage outlasts the patience.
          const since = last.code === 'connection' ? this.health.downSince(pick.host.id) : null;
          if (since !== null) {
            if (this.now() - since <= this.hostPatienceMs) tried.delete(pick.host.id);
            else if (tried.size >= budget) throw outOfPatience(pick.host, since, this.hostPatienceMs, last);
          }
        }
      }
      const now = this.now();
      throw withSoonest(last!, hosts, (host) => this.hostPicker.verdict(host, pickRequest, new Set(), now), tried, now);
    } catch (err) {
      const e = toPanoptesError(err);
      // Whatever the call ends with, it says every try a provider billed on the way.
      e.billed = billedBefore.calls > 0 ? { ...billedBefore } : undefined;
      throw e;
    } finally {
      if (waiting) request.onHostWait?.(null);
    }
  }

  /** One host try: pacing, budget, the call, penalty or success, metric, cache. */
  private async tryHost(
    host: ResolvedHost,
    request: ModelRequest,
    pick: PickRequest,
    cacheKey: string | undefined,
    opts: { probe?: boolean } = {},
  ): Promise<ModelResponse> {
    const rt = this.runtime(host.provider, pick.profile);
    // Reserved in the same turn as the pick that checked the room: no other call can take it in between.
    const reservation: Reservation | undefined = rt.budget
      ? this.budget.reserve(pick.profile, host.provider, this.spendOf(host, pick.estimate))
      : undefined;
    let entered = false;
    try {
      if (rt.pacer) {
        await rt.pacer.enter(request.signal);
        entered = true;
      }
      const started = performance.now();
      const maxTokens = outputCapOf(host, request.sampling.maxTokens);
      const capped = maxTokens === request.sampling.maxTokens ? request : { ...request, sampling: { ...request.sampling, maxTokens } };
      let res;
      try {
        res = await rt.client.call(host, capped);
        if (res.text.trim() === '') throw emptyOutput(host.id, res.finishReason, res.usage);
      } catch (err) {
        const e = toPanoptesError(err);
        const latencyMs = performance.now() - started;
        // An empty answer was still billed: its tokens count in the budget and the metrics.
        const billed = e.billed ? { inputTokens: e.billed.inputTokens, outputTokens: e.billed.outputTokens } : undefined;
        const cost = billed ? estCostUsd(billed, priceOfHost(host)) : 0;
        if (reservation) this.budget.settle(reservation, { calls: 1, tokens: billed ? billed.inputTokens + billed.outputTokens : 0, usd: cost });
        this.recordCall(host, request, pick.profile, e.code, latencyMs, billed, cost);
        if (e.code !== 'cancelled') {
          // A probe's failure always marks the host: its purpose is to keep a sweep off a failing one.
          const alone = !opts.probe && this.catalog.hosts(request.model).length === 1;
          const penalty = this.health.failed(host, e, this.now(), alone);
          this.log.debug(
            { run_id: request.runId, host: host.id, code: e.code, until: penalty ? untilText(penalty.until) : null },
            `router: ${e.message}`,
          );
          if (penalty?.until === Infinity) this.log.warn({ run_id: request.runId, host: host.id, scope: penalty.scope }, `router: blacklisted: ${e.message}`);
        }
        throw e;
      }
      const now = this.now();
      this.health.succeeded(host, now);
      const cost = estCostUsd(res.usage, priceOfHost(host));
      if (reservation) {
        this.budget.settle(reservation, { calls: 1, tokens: res.usage.inputTokens + res.usage.outputTokens, usd: cost });
      }
      this.recordCall(host, request, pick.profile, 'ok', res.latencyMs, res.usage, cost);
      if (cacheKey !== undefined) {
        const origin = sampleOf(request);
        this.cache!.put(cacheKey, {
          text: res.text,
          usage: res.usage,
          host: host.id,
          ...(res.finishReason === undefined ? {} : { finishReason: res.finishReason }),
          ...(origin === undefined ? {} : { origin }),
        });
      }
      return { ...res, host: host.id, cached: false };
    } finally {
      if (entered) rt.pacer!.leave();
      if (reservation && !reservation.settled) this.budget.settle(reservation, { calls: 0, tokens: 0, usd: 0 });
    }
  }

  private answerFromCache(
    request: ModelRequest,
    profile: string,
    hit: { text: string; usage: Usage; host: string; finishReason?: string },
  ): ModelResponse {
    this.writer.call(cacheHitRow(this.now(), request.model, profile, hit));
    const res: ModelResponse = { text: hit.text, usage: hit.usage, host: hit.host, cached: true, latencyMs: 0 };
    if (hit.finishReason !== undefined) res.finishReason = hit.finishReason;
    return res;
  }

  private recordCall(host: ResolvedHost, request: ModelRequest, profile: string, status: string, latencyMs: number, usage?: Usage, costUsd = 0): void {
    this.writer.call(hostTryRow(this.now(), host, request.model, profile, status, latencyMs, usage, costUsd));
  }

  private async waitFor(until: number, signal: AbortSignal | undefined, model: string): Promise<void> {
    const ms = Math.max(1, until - this.now());
    try {
      await sleep(ms, undefined, signal ? { signal } : undefined);
    } catch {
      throw cancelled(model);
    }
  }

  // ---- Eligibility -------------------------------------------------------------------------------

  private smallestWindowOf(model: string, hosts: readonly ResolvedHost[]): number {
    let w = this.smallestWindow.get(model);
    if (w === undefined) {
      w = Math.min(...hosts.map((h) => h.contextWindow));
      this.smallestWindow.set(model, w);
    }
    return w;
  }

  private keyState(provider: string, profile: string): 'present' | 'missing' | 'not_needed' {
    const name = this.catalog.termsOf(provider, profile).apiKeyEnv;
    if (!name) return 'not_needed';
    return readApiKey(this.env, name) ? 'present' : 'missing';
  }

  private spendOf(host: ResolvedHost, usage: Usage): { calls: number; tokens: number; usd: number } {
    return { calls: 1, tokens: usage.inputTokens + usage.outputTokens, usd: estCostUsd(usage, priceOfHost(host)) };
  }

  /** Conditions outside health: a missing key, a spent budget. */
  private gate(host: ResolvedHost, request: PickRequest | undefined): ReturnType<ProviderGate> {
    const profile = request?.profile ?? this.profile;
    const rt = this.providers.get(runtimeKey(profile, host.provider));
    if (!rt && this.keyState(host.provider, profile) === 'missing') {
      const name = this.catalog.termsOf(host.provider, profile).apiKeyEnv;
      return { state: 'no_key', until: null, reason: `${name} is not set` };
    }
    const budget = rt ? rt.budget : this.catalog.termsOf(host.provider, profile).dailyBudget;
    if (!budget) return undefined;
    const estimate = request ? this.spendOf(host, request.estimate) : { calls: 1, tokens: 0, usd: 0 };
    const block = this.budget.check(profile, host.provider, estimate);
    return block ? { state: 'over_budget', until: block.until, reason: block.reason } : undefined;
  }

  private runtime(provider: string, profile: string): ProviderRuntime {
    const key = runtimeKey(profile, provider);
    let rt = this.providers.get(key);
    if (!rt) {
      const terms = this.catalog.termsOf(provider, profile);
      rt = {
        client: this.hostClientFor(provider, readApiKey(this.env, terms.apiKeyEnv)),
        pacer: this.pacerOf(provider),
        budget: terms.dailyBudget,
      };
      this.providers.set(key, rt);
    }
    return rt;
  }

  /** A provider's pacing holds whatever profile a call runs under: its limits are the provider's. */
  private pacerOf(provider: string): ProviderPacer | undefined {
    if (!this.pacers.has(provider)) {
      const config = this.catalog.data.providers[provider]!;
      const pacer = new ProviderPacer({ rpm: config.rpm, maxConcurrency: config.maxConcurrency });
      this.pacers.set(provider, pacer.limits ? pacer : undefined);
    }
    return this.pacers.get(provider);
  }

  // ---- Reports -----------------------------------------------------------------------------------

  /** Recent calls and aggregates per provider, host and profile. */
  metrics(query: MetricsQuery = {}): MetricsReport {
    this.writer.flush();
    const since = query.since ?? this.now() - DAY_MS;
    return { ...metricsReport(this.routerStore, query, since), budgets: budgetWindows(this.catalog, this.budget, this.profile, query.profile) };
  }

  /**
   * Each logical model's hosts as routing sees them now, whether a privacy-safe one is routable,
   * and whether at least two frontier models have one (`frontierOk`).
   */
  posture(): PostureReport {
    return postureReport(this.postureSource(), this.now());
  }

  /** The roster: every logical model with its catalog facts, its hosts' live state and their last probes. */
  roster(): RosterReport {
    return rosterReport(this.postureSource(), this.now());
  }

  private postureSource(): PostureSource {
    return {
      catalog: this.catalog,
      hostPicker: this.hostPicker,
      privacyLock: this.privacyLock,
      probes: this.probes,
      windowOf: (model, hosts) => this.smallestWindowOf(model, hosts),
    };
  }

  // ---- Probes ------------------------------------------------------------------------------------

  /**
   * Sends one short call (at most 16 output tokens) to every host of the given logical models
   * (default: all), through the same path as any call: pacing, budget, metrics, and a penalty on
   * failure, so a host with a refused key or a retired model is blacklisted before a sweep starts
   * on it. A host whose key is not set is reported `no_key` without a call. Hosts are probed
   * concurrently (each provider's pacing still applies); the outcome of each is kept for the roster.
   */
  async probe(opts: { models?: readonly string[] | undefined; signal?: AbortSignal | undefined } = {}): Promise<ProbeReport> {
    const targets = probeTargets(this.catalog, opts.models ?? this.catalog.modelIds());
    const results = await Promise.all(targets.map(({ model, host }) => this.probeHost(model, host, opts.signal)));
    const ok = results.filter((r) => r.status === 'ok').length;
    return { at: this.now(), results, ok, failed: results.length - ok };
  }

  private async probeHost(model: string, host: ResolvedHost, signal: AbortSignal | undefined): Promise<ProbeResult> {
    const at = this.now();
    let outcome: ProbeOutcome;
    if (this.keyState(host.provider, this.profile) === 'missing') {
      const name = this.catalog.termsOf(host.provider, this.profile).apiKeyEnv;
      outcome = { at, status: 'no_key', latencyMs: 0, message: `${name} is not set` };
    } else {
      const { request, pick } = probeCall(model, this.profile, signal);
      const started = performance.now();
      try {
        // A probe is sent to a host whatever its state: the point is to learn it now.
        const res = await this.tryHost(host, request, pick, undefined, { probe: true });
        outcome = { at, status: 'ok', latencyMs: Math.round(res.latencyMs), message: null };
      } catch (err) {
        const e = toPanoptesError(err);
        outcome = { at, status: e.code, latencyMs: Math.round(performance.now() - started), message: e.message };
      }
    }
    this.probes.set(host.id, outcome);
    const v = this.hostPicker.verdict(host, undefined, new Set(), this.now());
    const state: HostState = v ? (v.state as HostState) : 'ready';
    if (outcome.status !== 'ok') this.log.warn({ host: host.id, status: outcome.status }, `router: probe failed: ${outcome.message}`);
    return { model, host: host.id, provider: host.provider, ...outcome, state };
  }

  /** Commits buffered metrics and cache entries now (readers of the database call this first). */
  flush(): void {
    this.writer.flush();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.writer.close();
    await Promise.all([...this.providers.values()].map((p) => p.client.close?.()));
    this.providers.clear();
    this.pacers.clear();
    this.ownConnection?.close();
  }
}

function runtimeKey(profile: string, provider: string): string {
  return `${profile}\u0000${provider}`;
}
