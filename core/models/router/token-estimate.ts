/**
 * How many tokens a request needs, to skip hosts whose context window cannot hold it. A bound
 * that costs nothing comes first: a token is at least one UTF-8 byte and a UTF-16 code unit is at
 * most three, so `length x 3` never undercounts. Only when that bound does not fit the smallest
 * window is the prompt really counted, with gpt-tokenizer (o200k) plus a margin for another
 * tokenizer's appetite and the chat template. The tokenizer (about 70 MB) loads on first need.
 * Runs on: Node (core).
 */
import type { ChatMessage } from '../model-client.js';

/** Tokens a chat template adds around each message (role markers, separators). */
const PER_MESSAGE_TOKENS = 8;
/** Other models' tokenizers can need more tokens than o200k for the same text. */
export const CONTEXT_MARGIN = { ratio: 1.15, tokens: 32 } as const;

type CountTokens = (text: string) => number;
let counter: Promise<CountTokens> | undefined;

function loadCounter(): Promise<CountTokens> {
  counter ??= import('gpt-tokenizer').then((m) => m.countTokens);
  return counter;
}

/** An upper bound on the prompt's tokens with no tokenizer: never below the truth. */
export function promptTokenBound(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) n += m.content.length * 3 + PER_MESSAGE_TOKENS;
  return n;
}

/** The prompt's tokens counted with gpt-tokenizer, plus the margin. */
export async function estimatePromptTokens(messages: readonly ChatMessage[]): Promise<number> {
  const count = await loadCounter();
  let n = 0;
  for (const m of messages) n += count(m.content) + PER_MESSAGE_TOKENS;
  return Math.ceil(n * CONTEXT_MARGIN.ratio) + CONTEXT_MARGIN.tokens;
}
