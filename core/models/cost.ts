/**
 * Estimated cost of token usage: input and output tokens at per-million prices.
 * Runs on: Node (core).
 */
import { FALLBACK_PRICE, type Price } from './catalog.js';

export function estCostUsd(usage: { inputTokens: number; outputTokens: number }, price: Price = FALLBACK_PRICE): number {
  return (usage.inputTokens / 1e6) * price.inputPerMTok + (usage.outputTokens / 1e6) * price.outputPerMTok;
}
