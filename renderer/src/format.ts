/**
 * How numbers, money, times and durations read on screen, the same in every view.
 * Runs on: renderer.
 */
import { formatUsd } from '../../core/common/money.js';
import { formatInt } from '../../core/common/numbers.js';

const COMPACT = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

/** Counts by the one rule of the app and the command line (core/common/numbers.ts, browser-safe). */
export { formatInt };

/** 1.2K, 3.4M: for chart axes and tight cells. */
export function formatCompact(n: number): string {
  return COMPACT.format(n);
}

/** Dollars by the one rule of the app and the command line (core/common/money.ts, browser-safe). */
export { formatUsd };

/** One call's cost: what it was billed, or for a cached answer $0.00 and what the cache saved. */
export function formatCallCost(r: { cached: boolean; estCostUsd: number; savedCostUsd: number }): string {
  return r.cached ? `${formatUsd(0)} · saved ${formatUsd(r.savedCostUsd)}` : formatUsd(r.estCostUsd);
}

const USD_SMALL = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumSignificantDigits: 2 });

/** Dollars on a chart axis: two significant digits below $1000 (so $0.002 and $0.004 differ), compact above. */
export function formatUsdAxis(n: number): string {
  if (n === 0) return '$0';
  return Math.abs(n) < 1000 ? USD_SMALL.format(n) : `$${formatCompact(n)}`;
}

export function formatPercent(fraction: number): string {
  return `${(Math.min(Math.max(fraction, 0), 1) * 100).toFixed(fraction > 0 && fraction < 0.1 ? 1 : 0)}%`;
}

export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  const h = Math.floor(m / 60);
  return `${h} h ${m % 60} min`;
}

export function formatTime(at: number | null): string {
  if (at === null) return '—';
  const d = new Date(at);
  const today = new Date();
  const sameDay = d.toDateString() === today.toDateString();
  return sameDay
    ? d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' })
    : d.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/** A moment with its date, always (lists and headers: a run of last week is not "10:02"). */
export function formatDateTime(at: number | null): string {
  if (at === null) return '—';
  return new Date(at).toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

export function formatRate(perSecond: number | null): string {
  if (perSecond === null) return '—';
  return perSecond >= 10 ? `${formatInt(Math.round(perSecond))}/s` : `${perSecond.toFixed(1)}/s`;
}

export function formatPrice(perMTok: number | null): string {
  return perMTok === null ? '—' : `$${perMTok < 1 ? perMTok.toFixed(2) : perMTok.toFixed(perMTok % 1 === 0 ? 0 : 2)}`;
}

/** The last part of a path, for a manifest shown in a table. */
export function baseName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}
