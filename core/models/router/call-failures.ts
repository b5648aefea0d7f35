/**
 * The router's failures as a caller sees them: which failures bounce a call to another host, and
 * the typed errors for a call that was cancelled, that waited for a down host past its patience,
 * that found no eligible host (why, host by host, and when the soonest returns; a prompt no window
 * holds is the call's own `bad_request`), or that spent its attempts. Pure: the router passes in the clock, the hosts and their verdicts.
 * Runs on: Node (core).
 */
import { PanoptesError, type PrivacyMode } from '../../domain.js';
import type { ResolvedHost } from '../catalog.js';
import { ProviderFailure } from '../providers/failures.js';
import type { HostVerdict, Pick } from './host-picker.js';

/** Whether another host could succeed where this one failed. */
export function failsOver(e: PanoptesError): boolean {
  if (e.retryable || e.code === 'auth' || e.code === 'quota') return true;
  // A host that lacks the model, or has no room for the prompt, says nothing of the next host.
  return e instanceof ProviderFailure && (e.status === 404 || e.status === 413);
}

export function untilText(until: number): string {
  return Number.isFinite(until) ? new Date(until).toISOString() : 'restart';
}

export function cancelled(model: string): PanoptesError {
  return new PanoptesError('cancelled', `call to "${model}" was cancelled`, { retryable: false });
}

/** A call that waited for a down host longer than the patience allows: given up, not to be retried. */
export function outOfPatience(host: ResolvedHost, since: number, hostPatienceMs: number, last: PanoptesError | undefined): PanoptesError {
  const secs = Math.round(hostPatienceMs / 1000);
  return new PanoptesError('connection', `${host.id} is down since ${new Date(since).toISOString()}, longer than the host patience (${secs} s)${last ? `: ${last.message}` : ''}`, {
    retryable: false,
    ...(last ? { cause: last } : {}),
  });
}

/** The typed error for a call with no eligible host: why, host by host, and when the soonest returns. */
export function nothingEligible(
  model: string,
  privacy: PrivacyMode,
  pick: Exclude<Pick, { kind: 'host' }>,
  last: PanoptesError | undefined,
  now: number,
): PanoptesError {
  const soonest = pick.kind === 'none' ? pick.soonest : pick.until;
  const retryAfterMs = soonest === null ? undefined : Math.max(0, soonest - now);
  if (pick.kind === 'wait') {
    // Still cooling after every wait this call may make.
    return new PanoptesError('no_host', `every eligible host of "${model}" is still cooling down; ${pick.host.id} returns first`, {
      retryable: true,
      retryAfterMs: retryAfterMs!,
      ...(last ? { cause: last } : {}),
    });
  }
  const verdicts = pick.verdicts;
  const why = verdicts.map((v) => `${v.host.id}: ${v.state}${v.until ? ` until ${untilText(v.until)}` : ''} (${v.reason})`).join('; ');
  const others = verdicts.filter((v) => v.state !== 'excluded');
  if (last) {
    // The call tried something: its last failure is the answer, with when another host returns.
    return new PanoptesError(last.code, `${last.message}; no other host of "${model}" is eligible: ${why}`, {
      retryable: last.retryable || retryAfterMs !== undefined,
      ...(retryAfterMs === undefined ? (last.retryAfterMs === undefined ? {} : { retryAfterMs: last.retryAfterMs }) : { retryAfterMs }),
      cause: last,
    });
  }
  if (others.length > 0 && others.every((v) => v.state === 'privacy')) {
    return new PanoptesError(
      'privacy_blocked',
      `every host of "${model}" may train on or log prompts; privacy mode "${privacy}" refuses them`,
    );
  }
  if (others.length > 0 && others.every((v) => v.state === 'context')) return fitsNoHost(model, others);
  if (retryAfterMs !== undefined && others.some((v) => v.state === 'cooling')) {
    return new PanoptesError('no_host', `no host of "${model}" can take a call now: ${why}`, { retryable: true, retryAfterMs });
  }
  if (others.length > 0 && others.every((v) => v.state === 'over_budget' || v.state === 'privacy')) {
    return new PanoptesError('budget_exceeded', `no host of "${model}" has budget left: ${why}`, {
      retryable: false,
      retryAfterMs,
    });
  }
  return new PanoptesError('no_host', `no host of "${model}" can take this call: ${why}`, {
    retryable: false,
    retryAfterMs,
  });
}

/**
 * A prompt too long for every window of its model: the vignette's failure, not the job's (the
 * job's other vignettes may fit), and not retryable (it will not fit the next time either).
 */
function fitsNoHost(model: string, verdicts: readonly HostVerdict[]): PanoptesError {
  const largest = verdicts.reduce((a, b) => (b.host.contextWindow > a.host.contextWindow ? b : a));
  const n = (x: number) => x.toLocaleString('en-US');
  return new PanoptesError(
    'bad_request',
    `fits no host of ${model}: needs ~${n(largest.needTokens ?? 0)} tokens, the largest window is ${n(largest.host.contextWindow)}`,
    { retryable: false },
  );
}

/** The last failure of a call that used its attempt budget, with when a host of the model returns. */
export function withSoonest(
  last: PanoptesError,
  hosts: readonly ResolvedHost[],
  verdictOf: (host: ResolvedHost) => HostVerdict | undefined,
  tried: ReadonlySet<string>,
  now: number,
): PanoptesError {
  let soonest: number | null = null;
  for (const host of hosts) {
    const v = verdictOf(host);
    if (v?.until && (soonest === null || v.until < soonest)) soonest = v.until;
  }
  if (soonest === null || last.retryAfterMs !== undefined) return last;
  return new PanoptesError(last.code, `${last.message} (tried ${[...tried].join(', ')})`, {
    retryable: last.retryable,
    retryAfterMs: Math.max(0, soonest - now),
    cause: last,
  });
}
