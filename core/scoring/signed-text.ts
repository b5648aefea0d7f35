/**
 * A difference as the text reports print it: `+0.250`, `-0.125`, `±0.000` (ASCII, so Markdown and
 * terminals show it alike). Its own file so the decision, gate and report formatters share it
 * without importing each other.
 * Runs on: Node (core); pure.
 */
export function signed(x: number, digits = 3): string {
  return (x > 0 ? '+' : x < 0 ? '' : '±') + x.toFixed(digits);
}
