/**
 * The rule of thumb for a text's tokens before a tokenizer has counted them, one rule for the app's
 * run estimate and the router's budget reservations (settled with the real counts after the call):
 * about four characters a token for English-like text, plus a chat template's few tokens a message.
 * Browser-safe: it imports nothing, so the renderer may import it.
 * Runs on: Node (core) and the renderer (browser-safe).
 */

/** Characters per token for English-like text, the usual rule of thumb. */
export const CHARS_PER_TOKEN = 4;
/** Tokens a chat template adds around each message (role markers, separators). */
export const PER_MESSAGE_TOKENS = 8;

/** A text's tokens by the rule of thumb, from its length in characters. */
export function roughTokensOfChars(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
