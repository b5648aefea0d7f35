/**
 * Estimated cost of token usage: input and output tokens at per-million prices. Free of the
 * catalog's schemas, so what only prices stored usage (`panoptes runs`, `stats`) loads no validator.
 * Browser-safe: it imports nothing, so the renderer's run estimate prices by the same rule.
 * Runs on: Node (core) and the renderer (browser-safe).
 */

/** Prices per million tokens. */
export interface Price {
  inputPerMTok: number;
  outputPerMTok: number;
}

/** The illustrative flat prices of the /stats accounting ($3 in, $15 out per million), used when the catalog gives none. */
export const FALLBACK_PRICE = { inputPerMTok: 3, outputPerMTok: 15 } as const;

export function estCostUsd(usage: { inputTokens: number; outputTokens: number }, price: Price = FALLBACK_PRICE): number {
  return (usage.inputTokens / 1e6) * price.inputPerMTok + (usage.outputTokens / 1e6) * price.outputPerMTok;
}
