/**
 * Cooldowns and ranking, on a clock the test moves: a new cooldown never shortens a longer one,
 * hosts return in the order their cooldowns end, penalties take the right scope (host or provider)
 * and length, and the pick rotates across providers, then prefers the healthier host.
 */
import { describe, expect, it } from 'vitest';
import { PanoptesError } from '../../core/domain.js';
import { ProviderFailure } from '../../core/models/providers/failures.js';
import { HostHealth } from '../../core/models/router/host-health.js';
import { HostPicker, type PickRequest } from '../../core/models/router/host-picker.js';
import { catalog, host, manualClock } from './helpers.js';

const cat = catalog({
  providers: {
    p1: { kind: 'mock', trainsOnData: false },
    p2: { kind: 'mock', trainsOnData: false },
    p3: { kind: 'mock', trainsOnData: false },
  },
  models: {
    m: { hosts: [host('p1', 'x'), host('p2', 'y'), host('p3', 'z')] },
    n: { hosts: [host('p1', 'other')] },
    two: { hosts: [host('p1', 'a'), host('p1', 'b')] },
  },
});
const [x, y, z] = cat.hosts('m') as [ReturnType<typeof cat.hosts>[0], ReturnType<typeof cat.hosts>[0], ReturnType<typeof cat.hosts>[0]];
const req: PickRequest = { profile: 'default', privacy: 'strict', promptTokens: 0, maxOutput: 10, estimate: { inputTokens: 1, outputTokens: 1 } };

const rateLimit = (ms?: number) =>
  new PanoptesError('rate_limited', '429', { retryable: true, ...(ms === undefined ? {} : { retryAfterMs: ms }) });

function scheduler(health: HostHealth, now: () => number, briefWaitMs = 0): HostPicker {
  return new HostPicker({ catalog: cat, health, gate: () => undefined, now, briefWaitMs });
}

describe('cooldowns', () => {
  it('never shortens a longer cooldown, and extends a shorter one', () => {
    const clock = manualClock();
    const health = new HostHealth();
    const t0 = clock.now();
    health.failed(x, rateLimit(10_000), t0);
    expect(health.state(x, t0)).toMatchObject({ state: 'cooling', until: t0 + 10_000 });
    health.failed(x, rateLimit(2_000), t0 + 1000);
    expect(health.state(x, t0 + 1000)).toMatchObject({ state: 'cooling', until: t0 + 10_000 });
    health.failed(x, rateLimit(30_000), t0 + 2000);
    expect(health.state(x, t0 + 2000)).toMatchObject({ state: 'cooling', until: t0 + 32_000 });
    expect(health.state(x, t0 + 32_000)).toEqual({ state: 'ready' });
  });

  it('backs off server errors exponentially, capped, and resets on success', () => {
    const health = new HostHealth({ errorBaseMs: 1000, errorMaxMs: 5000 });
    const err = new PanoptesError('server_error', '500', { retryable: true });
    let t = 0;
    const untils: number[] = [];
    for (let i = 0; i < 5; i++) {
      t += 100_000;
      health.failed(x, err, t);
      untils.push((health.state(x, t) as { until: number }).until - t);
    }
    expect(untils).toEqual([1000, 2000, 4000, 5000, 5000]);
    health.succeeded(x, t + 200_000);
    health.failed(x, err, t + 300_000);
    expect((health.state(x, t + 300_000) as { until: number }).until - (t + 300_000)).toBe(1000);
  });

  it("never benches a model's only host for a transient failure, but honours what it asks for", () => {
    const health = new HostHealth();
    const now = 1_000_000;
    health.failed(x, new PanoptesError('server_error', '500', { retryable: true }), now, true);
    health.failed(x, new PanoptesError('timeout', 'slow', { retryable: true }), now, true);
    expect(health.state(x, now)).toEqual({ state: 'ready' });
    // ...though it counts against its health,
    expect(health.failureScore(x.id)).toBeGreaterThan(0.3);
    // and a Retry-After, a rate limit or a refused key still apply.
    health.failed(x, new PanoptesError('server_error', '503', { retryable: true, retryAfterMs: 2000 }), now, true);
    expect(health.state(x, now)).toMatchObject({ state: 'cooling', until: now + 2000 });
    health.failed(y, rateLimit(5000), now, true);
    expect(health.state(y, now)).toMatchObject({ state: 'cooling', until: now + 5000 });
    health.failed(z, new ProviderFailure('auth', '401', { retryable: false, status: 401 }), now, true);
    expect(health.state(z, now)).toMatchObject({ state: 'blacklisted' });
  });

  it('applies auth, quota and not-found penalties to the right scope', () => {
    const now = 1_000_000;
    const h1 = new HostHealth({ quotaMs: 3_600_000 });
    h1.failed(x, new ProviderFailure('auth', '401', { retryable: false, status: 401 }), now);
    // A refused key takes the whole provider out, for every model it hosts.
    expect(h1.state(x, now)).toMatchObject({ state: 'blacklisted', scope: 'provider' });
    expect(h1.state(cat.hosts('n')[0]!, now + 1e9)).toMatchObject({ state: 'blacklisted' });
    expect(h1.state(y, now)).toEqual({ state: 'ready' });

    const h2 = new HostHealth();
    h2.failed(x, new ProviderFailure('auth', '403', { retryable: false, status: 403 }), now);
    expect(h2.state(x, now)).toMatchObject({ state: 'blacklisted', scope: 'host' });
    expect(h2.state(cat.hosts('n')[0]!, now)).toEqual({ state: 'ready' });

    const h3 = new HostHealth({ quotaMs: 3_600_000 });
    h3.failed(x, new ProviderFailure('quota', '402', { retryable: false, status: 402 }), now);
    expect(h3.state(cat.hosts('n')[0]!, now)).toMatchObject({ state: 'cooling', until: now + 3_600_000, scope: 'provider' });

    const h4 = new HostHealth();
    h4.failed(x, new ProviderFailure('bad_request', '404', { retryable: false, status: 404 }), now);
    expect(h4.state(x, now)).toMatchObject({ state: 'blacklisted', scope: 'host' });
    h4.failed(y, new ProviderFailure('bad_request', '400', { retryable: false, status: 400 }), now);
    expect(h4.state(y, now)).toEqual({ state: 'ready' });
  });

  it('returns hosts in the order their cooldowns end', () => {
    const clock = manualClock();
    const health = new HostHealth();
    const s = scheduler(health, clock.now);
    const t0 = clock.now();
    health.failed(x, rateLimit(3000), t0);
    health.failed(y, rateLimit(1000), t0);
    health.failed(z, rateLimit(2000), t0);
    const none = s.pick('m', req, new Set());
    expect(none.kind).toBe('none');
    expect(none.kind === 'none' && none.soonest).toBe(t0 + 1000);
    const order: string[] = [];
    for (const dt of [1000, 1000, 1000]) {
      clock.advance(dt);
      const p = s.pick('m', req, new Set(order));
      expect(p.kind).toBe('host');
      if (p.kind === 'host') order.push(p.host.id);
    }
    expect(order).toEqual(['p2/y', 'p3/z', 'p1/x']);
  });

  it('says to wait when the only hosts left return within the brief wait', () => {
    const clock = manualClock();
    const health = new HostHealth();
    const s = scheduler(health, clock.now, 5000);
    health.failed(x, rateLimit(4000), clock.now());
    health.failed(y, rateLimit(60_000), clock.now());
    health.failed(z, rateLimit(2000), clock.now());
    const p = s.pick('m', req, new Set());
    expect(p).toMatchObject({ kind: 'wait', until: clock.now() + 2000 });
    expect(p.kind === 'wait' && p.host.id).toBe('p3/z');
  });
});

describe('ranking', () => {
  it('rotates to the least recently attempted provider', () => {
    const s = scheduler(new HostHealth(), manualClock().now);
    const picks: string[] = [];
    for (let i = 0; i < 6; i++) {
      const p = s.pick('m', req, new Set());
      if (p.kind === 'host') picks.push(p.host.provider);
    }
    expect(picks).toEqual(['p1', 'p2', 'p3', 'p1', 'p2', 'p3']);
  });

  it('prefers the healthier host of one provider, then the fresher', () => {
    const clock = manualClock();
    const health = new HostHealth({ errorBaseMs: 1 });
    const s = scheduler(health, clock.now);
    const [a, b] = cat.hosts('two') as [typeof x, typeof x];
    health.failed(a, new PanoptesError('server_error', '500', { retryable: true }), clock.now());
    clock.advance(10);
    let p = s.pick('two', req, new Set());
    expect(p.kind === 'host' && p.host.id).toBe('p1/b');
    // Equal health: the host that answered most recently comes first.
    const h2 = new HostHealth();
    const s2 = scheduler(h2, clock.now);
    h2.succeeded(a, clock.now() - 5000);
    h2.succeeded(b, clock.now() - 10);
    p = s2.pick('two', req, new Set());
    expect(p.kind === 'host' && p.host.id).toBe('p1/b');
  });
});
