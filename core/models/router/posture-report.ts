/**
 * The router's posture and roster, as routing sees the catalog now: each logical model's hosts
 * with their state (ready, cooling, down, blacklisted, no key, over budget), whether a privacy-safe
 * host is routable, whether two frontier models are (`frontierOk`), and for the roster each
 * model's and host's catalog facts and the host's last probe.
 * Runs on: Node (core).
 */
import type { PrivacyMode } from '../../domain.js';
import type { Catalog, ResolvedHost } from '../catalog.js';
import type { HostPosture, ModelPosture, PostureReport, ProbeOutcome, RosterReport } from './router-report.js';
import type { HostPicker, HostVerdict } from './host-picker.js';

/** What the reports read from the router. */
export interface PostureSource {
  catalog: Catalog;
  hostPicker: HostPicker;
  privacyLock: PrivacyMode | null;
  /** The last probe of each host in this process, by host id. */
  probes: ReadonlyMap<string, ProbeOutcome>;
  /** The smallest context window of a logical model's hosts. */
  windowOf: (model: string, hosts: readonly ResolvedHost[]) => number;
}

/**
 * Each logical model's hosts as routing sees them now, whether a privacy-safe one is routable,
 * and whether at least two frontier models have one (`frontierOk`).
 */
export function postureReport(src: PostureSource, now: number): PostureReport {
  const models = src.catalog.modelIds().map((model) => modelPosture(src, model, now));
  const frontierReady = models.filter((m) => m.frontier && m.privacySafeRoutable).map((m) => m.model);
  return { at: now, privacyLock: src.privacyLock, frontierOk: frontierReady.length >= 2, frontierReady, models };
}

/** The roster: every logical model with its catalog facts, its hosts' live state and their last probes. */
export function rosterReport(src: PostureSource, now: number): RosterReport {
  const posture = postureReport(src, now);
  return {
    ...posture,
    models: posture.models.map((m) => {
      const entry = src.catalog.data.models[m.model]!;
      const hosts = src.catalog.hosts(m.model);
      const price = src.catalog.priceOf(m.model);
      return {
        ...m,
        label: entry.label ?? m.model,
        frontierAsOf: entry.frontierAsOf ?? null,
        contextWindow: src.windowOf(m.model, hosts),
        inputPerMTok: price.inputPerMTok,
        outputPerMTok: price.outputPerMTok,
        privacySafe: hosts.some((h) => h.privacySafe),
        hosts: m.hosts.map((hp, i) => {
          const host = hosts[i]!;
          return {
            ...hp,
            kind: host.providerConfig.kind,
            model: host.model,
            contextWindow: host.contextWindow,
            inputPerMTok: host.inputPerMTok ?? null,
            outputPerMTok: host.outputPerMTok ?? null,
            lastProbe: src.probes.get(host.id) ?? null,
          };
        }),
      };
    }),
  };
}

function modelPosture(src: PostureSource, model: string, now: number): ModelPosture {
  const none = new Set<string>();
  const hosts: HostPosture[] = src.catalog.hosts(model).map((host) => {
    const v: HostVerdict | undefined = src.hostPicker.verdict(host, undefined, none, now);
    return {
      id: host.id,
      provider: host.provider,
      privacySafe: host.privacySafe,
      state: v ? (v.state as HostPosture['state']) : 'ready',
      until: v?.state === 'blacklisted' ? null : (v?.until ?? null),
      reason: v?.reason ?? null,
    };
  });
  return {
    model,
    frontier: src.catalog.data.models[model]?.frontier === true,
    routable: hosts.some((h) => h.state === 'ready'),
    privacySafeRoutable: hosts.some((h) => h.state === 'ready' && h.privacySafe),
    hosts,
  };
}
