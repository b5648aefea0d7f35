/**
 * Privacy routing. A host is privacy-safe iff it neither trains on nor logs
 * prompts. `strict` (the default) drops every unsafe host and refuses with `privacy_blocked` rather
 * than leak; `fallback` tries safe hosts first and an unsafe one only as a last resort; `off` uses
 * all. An instance can be locked to strict (`PANOPTES_PRIVACY_LOCK=strict`): then every call is
 * strict, whatever its run asked for.
 * Runs on: Node (core).
 */
import { PanoptesError, type PrivacyMode } from '../../domain.js';
import type { ResolvedHost } from '../catalog.js';

export const PRIVACY_LOCK_ENV = 'PANOPTES_PRIVACY_LOCK';

/** The instance's lock from the environment: `strict`, or null when unset. Anything else is refused. */
export function privacyLockFromEnv(env: NodeJS.ProcessEnv = process.env): PrivacyMode | null {
  const raw = env[PRIVACY_LOCK_ENV]?.trim();
  if (!raw) return null;
  if (raw === 'strict') return 'strict';
  throw new PanoptesError('invalid_input', `${PRIVACY_LOCK_ENV} may only be "strict" (got "${raw}")`, {
    where: PRIVACY_LOCK_ENV,
  });
}

/** The mode a call really runs under. */
export function effectivePrivacy(requested: PrivacyMode, lock: PrivacyMode | null): PrivacyMode {
  return lock ?? requested;
}

/** Hosts in the order privacy allows them: one tier per step of preference, unsafe hosts never in strict. */
export function privacyTiers(hosts: readonly ResolvedHost[], mode: PrivacyMode): ResolvedHost[][] {
  if (mode === 'off') return [[...hosts]];
  const safe = hosts.filter((h) => h.privacySafe);
  if (mode === 'strict') return [safe];
  return [safe, hosts.filter((h) => !h.privacySafe)];
}
