/**
 * Counts as the app and the command line both print them: thousands separators, en-US (1,234,567).
 * Whole numbers are grouped here by hand: a process's first toLocaleString loads ICU's locale data,
 * 40-80 ms that `panoptes runs` would otherwise spend on its table of counts. Others (a fractional
 * latency) go to toLocaleString.
 * Browser-safe: it imports nothing, so the renderer may import it.
 * Runs on: Node (core) and the renderer (browser-safe).
 */
export function formatInt(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  const digits = Math.abs(n).toString();
  const head = digits.length % 3 || 3;
  let out = digits.slice(0, head);
  for (let i = head; i < digits.length; i += 3) out += ',' + digits.slice(i, i + 3);
  return n < 0 ? '-' + out : out;
}
