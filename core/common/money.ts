/**
 * Dollars as the app and the command line both print them, one rule: cents from a cent up, and
 * below a cent two significant digits (so $0.0041 and $0.000012 tell apart, and a paid call is never
 * "$0.0000"); exactly nothing is $0.00. Done by hand: a process's first Intl call loads ICU's data,
 * which the command line's start-up would pay for.
 * Browser-safe: it imports nothing, so the renderer may import it (the one tier of core it may).
 * Runs on: Node (core) and the renderer (browser-safe).
 */
export function formatUsd(n: number): string {
  if (!Number.isFinite(n)) return '—';
  const sign = n < 0 ? '-' : '';
  const a = Math.abs(n);
  if (a === 0) return '$0.00';
  if (a >= 0.01) return `${sign}$${a.toFixed(2)}`;
  // Two significant digits: as many places as the first non-zero digit needs, plus one.
  const places = Math.min(100, 1 - Math.floor(Math.log10(a)));
  return `${sign}$${a.toFixed(places)}`;
}
