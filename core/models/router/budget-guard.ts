/**
 * The budget guard: a rolling 24 h window of calls, tokens and USD per (profile, provider),
 * against the provider's daily budget under that profile (the profile's, else the provider's
 * own). A call runs under the router's profile unless it names its own (judge calls run under
 * `judge`), so a profile can cap its calls apart from the others. A call reserves its estimate before it goes out, so concurrent calls cannot
 * overshoot together; the reservation is settled with the real usage when the call ends. A
 * provider whose window has no room is not eligible until enough old spend ages out: the guard
 * says exactly when. Spend is kept in one-minute buckets, persisted, and reloaded on start.
 * Runs on: Node (core).
 */
import type { DailyBudget } from '../catalog.js';
import type { RouterStore } from '../../store/router-store.js';
import type { WriteBehind } from './write-behind.js';

export const BUDGET_WINDOW_MS = 24 * 60 * 60_000;
const MINUTE_MS = 60_000;

export interface Spend {
  calls: number;
  tokens: number;
  usd: number;
}

interface Bucket extends Spend {
  minute: number;
}

/** Why a provider cannot take a call now, and when it can (null: this call never fits the budget). */
export interface BudgetBlock {
  until: number | null;
  reason: string;
}

export interface Reservation {
  profile: string;
  provider: string;
  estimate: Spend;
  settled: boolean;
}

class Window {
  /** Oldest first. */
  readonly buckets: Bucket[] = [];
  readonly used: Spend = { calls: 0, tokens: 0, usd: 0 };
  readonly pending: Spend = { calls: 0, tokens: 0, usd: 0 };

  add(minute: number, s: Spend): void {
    let last = this.buckets.at(-1);
    if (!last || last.minute < minute) {
      last = { minute, calls: 0, tokens: 0, usd: 0 };
      this.buckets.push(last);
    }
    // Spend lands in the newest bucket even if the clock stepped back: the window never loses it early.
    last.calls += s.calls;
    last.tokens += s.tokens;
    last.usd += s.usd;
    this.used.calls += s.calls;
    this.used.tokens += s.tokens;
    this.used.usd += s.usd;
  }

  /** Drops buckets that fell out of the window ending at `now`. */
  age(now: number): void {
    const firstLive = Math.floor((now - BUDGET_WINDOW_MS) / MINUTE_MS) + 1;
    while (this.buckets.length > 0 && this.buckets[0]!.minute < firstLive) {
      const b = this.buckets.shift()!;
      this.used.calls -= b.calls;
      this.used.tokens -= b.tokens;
      this.used.usd -= b.usd;
    }
  }
}

const DIMENSIONS = [
  ['calls', 'calls'],
  ['tokens', 'tokens'],
  ['usd', 'USD'],
] as const;

export class BudgetGuard {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly opts: {
      store: RouterStore;
      writer: WriteBehind;
      now: () => number;
      budgetOf: (provider: string, profile: string) => DailyBudget | undefined;
    },
  ) {}

  private window(profile: string, provider: string): Window {
    const key = `${profile}\u0000${provider}`;
    let w = this.windows.get(key);
    if (!w) {
      w = new Window();
      const since = Math.floor((this.opts.now() - BUDGET_WINDOW_MS) / MINUTE_MS) + 1;
      for (const row of this.opts.store.budgetUsage(profile, since)) {
        if (row.provider === provider) w.add(row.minute, row);
      }
      this.windows.set(key, w);
    }
    w.age(this.opts.now());
    return w;
  }

  /** Whether `estimate` fits the provider's window now; undefined when it does (or there is no budget). */
  check(profile: string, provider: string, estimate: Spend): BudgetBlock | undefined {
    const budget = this.opts.budgetOf(provider, profile);
    if (!budget) return undefined;
    const w = this.window(profile, provider);
    const now = this.opts.now();
    let until = 0;
    let reason = '';
    for (const [dim, label] of DIMENSIONS) {
      const limit = budget[dim];
      if (limit === undefined) continue;
      const budgetName = `daily ${label} budget of ${limit} (profile "${profile}")`;
      if (estimate[dim] > limit) return { until: null, reason: `this call alone exceeds the ${budgetName}` };
      const excess = w.used[dim] + w.pending[dim] + estimate[dim] - limit;
      if (excess <= 0) continue;
      reason = `the ${budgetName} is used up`;
      // Room held only by calls in flight comes back when they settle: look again in a second.
      until = Math.max(until, this.freedAt(w, dim, excess) ?? now + 1000);
    }
    return until === 0 ? undefined : { until, reason };
  }

  /** When enough of the oldest spend in `dim` has aged out to free `excess`; null if settled spend cannot. */
  private freedAt(w: Window, dim: keyof Spend, excess: number): number | null {
    let freed = 0;
    for (const b of w.buckets) {
      freed += b[dim];
      if (freed >= excess) return (b.minute + 1) * MINUTE_MS + BUDGET_WINDOW_MS;
    }
    return null;
  }

  /** Holds `estimate` against the provider's window until `settle`. */
  reserve(profile: string, provider: string, estimate: Spend): Reservation {
    const w = this.window(profile, provider);
    w.pending.calls += estimate.calls;
    w.pending.tokens += estimate.tokens;
    w.pending.usd += estimate.usd;
    return { profile, provider, estimate, settled: false };
  }

  /** Replaces the reservation with what the call really spent, and persists it. */
  settle(r: Reservation, actual: Spend): void {
    if (r.settled) return;
    r.settled = true;
    const w = this.window(r.profile, r.provider);
    w.pending.calls -= r.estimate.calls;
    w.pending.tokens -= r.estimate.tokens;
    w.pending.usd -= r.estimate.usd;
    const minute = Math.floor(this.opts.now() / MINUTE_MS);
    w.add(minute, actual);
    this.opts.writer.spend({ profile: r.profile, provider: r.provider, minute, ...actual });
  }

  /** Spend in the window now, settled plus reserved. */
  usage(profile: string, provider: string): Spend {
    const w = this.window(profile, provider);
    return { calls: w.used.calls + w.pending.calls, tokens: w.used.tokens + w.pending.tokens, usd: w.used.usd + w.pending.usd };
  }
}
