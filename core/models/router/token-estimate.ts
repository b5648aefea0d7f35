/**
 * How many tokens a request needs, to skip hosts whose context window cannot hold it. A bound
 * that costs nothing comes first: a token is at least one UTF-8 byte and a UTF-16 code unit is at
 * most three, so `length x 3` never undercounts. Only when that bound does not fit the smallest
 * window is the prompt really counted, with gpt-tokenizer (o200k) plus a margin for another
 * tokenizer's appetite and the chat template. The tokenizer (about 70 MB) loads on first need.
 *
 * The count is linear in the prompt and happens off the event loop. BPE merges within a
 * pre-tokenized word, and a text without spaces (CJK, `xxxx...`) is one word: counted whole it
 * costs far more than linear (100,000 CJK characters took 40 s). So the text is counted in pieces
 * of `PIECE_CHARS` (a few milliseconds each at worst; a cut can only stop a merge, so pieces count
 * a little more, never much less), and only `SAMPLE_PIECES` pieces per message, spread evenly over
 * it, the rest extrapolated from them. The tokenizer lives in a worker thread of its own: loading
 * it takes a second or more on a busy machine, and neither that nor any count holds the loop that
 * serves requests and lands records. Budget reservations take a rougher size still (`roughTokens`),
 * settled with the real counts after the call.
 * Runs on: Node (core).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { PER_MESSAGE_TOKENS, roughTokensOfChars } from '../../common/rough-tokens.js';
import type { ChatMessage, ModelRequest } from '../model-client.js';

/** Other models' tokenizers can need more tokens than o200k for the same text. */
export const CONTEXT_MARGIN = { ratio: 1.15, tokens: 32 } as const;
/** Characters counted at once: BPE's cost within one piece stays a few milliseconds whatever the text. */
export const PIECE_CHARS = 256;
/** Pieces counted exactly per message (64 x 256 = 16,384 characters); a longer message is sampled evenly and extrapolated. */
export const SAMPLE_PIECES = 64;

/** The tokenizer's thread: it takes pieces of text and answers their counts. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { pathToFileURL } = require('node:url');
const ready = import(pathToFileURL(workerData.tokenizer).href);
parentPort.on('message', async ({ id, pieces }) => {
  try {
    const { countTokens } = await ready;
    parentPort.postMessage({ id, counts: pieces.map((p) => countTokens(p)) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  }
});`;

interface CountReply {
  id: number;
  counts?: number[];
  error?: string;
}

let thread: Worker | undefined;
let nextId = 0;
const waiting = new Map<number, { resolve: (counts: number[]) => void; reject: (err: Error) => void }>();

/** The tokenizer thread, started on first need; it keeps the process alive only while a count waits. */
function tokenizerThread(): Worker {
  if (thread) return thread;
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { tokenizer: createRequire(import.meta.url).resolve('gpt-tokenizer') } });
  worker.on('message', (reply: CountReply) => {
    const w = waiting.get(reply.id);
    if (!w) return;
    waiting.delete(reply.id);
    if (waiting.size === 0) worker.unref();
    if (reply.counts) w.resolve(reply.counts);
    else w.reject(new Error(`token count failed: ${reply.error ?? 'no answer'}`));
  });
  const fail = (err: Error) => {
    if (thread === worker) thread = undefined;
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the tokenizer thread exited (${code})`)));
  // The thread keeps the process alive only while a count is waiting (and a 'message' listener refs it).
  worker.unref();
  thread = worker;
  return worker;
}

/** Counts each piece in the tokenizer thread. */
function countPieces(pieces: string[]): Promise<number[]> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const worker = tokenizerThread();
    waiting.set(id, { resolve, reject });
    worker.ref();
    worker.postMessage({ id, pieces });
  });
}

/** An upper bound on the prompt's tokens with no tokenizer: never below the truth. */
export function promptTokenBound(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) n += m.content.length * 3 + PER_MESSAGE_TOKENS;
  return n;
}

/** Where the piece starting at `start` ends: `PIECE_CHARS` on, not between the halves of a surrogate pair. */
function pieceEnd(text: string, start: number): number {
  let end = Math.min(text.length, start + PIECE_CHARS);
  if (end < text.length && end > start + 1) {
    const c = text.charCodeAt(end - 1);
    if (c >= 0xd800 && c <= 0xdbff) end -= 1;
  }
  return end;
}

/** The pieces of a text that are counted: all when few, otherwise `SAMPLE_PIECES` evenly spaced. */
function samplePieces(text: string): string[] {
  const pieces = Math.ceil(text.length / PIECE_CHARS);
  const step = pieces <= SAMPLE_PIECES ? 1 : pieces / SAMPLE_PIECES;
  const out: string[] = [];
  for (let i = 0; i < pieces; i += step) {
    const start = Math.floor(i) * PIECE_CHARS;
    out.push(text.slice(start, pieceEnd(text, start)));
  }
  return out;
}

/** Each text's tokens counted with gpt-tokenizer (sampled past 16,384 characters), without any margin. */
export async function estimateTextTokens(texts: readonly string[]): Promise<number[]> {
  const samples = texts.map(samplePieces);
  const counts = await countPieces(samples.flat());
  let at = 0;
  return texts.map((text, i) => {
    let tokens = 0;
    let chars = 0;
    for (const p of samples[i]!) {
      tokens += counts[at++]!;
      chars += p.length;
    }
    return chars >= text.length ? tokens : Math.ceil((tokens * text.length) / chars);
  });
}

/** The prompt's tokens plus the margin, from its messages' token counts (as `estimateTextTokens` gives them). */
export function withPromptMargin(messageTokens: readonly number[]): number {
  let n = 0;
  for (const t of messageTokens) n += t + PER_MESSAGE_TOKENS;
  return Math.ceil(n * CONTEXT_MARGIN.ratio) + CONTEXT_MARGIN.tokens;
}

/** The prompt's tokens counted with gpt-tokenizer (sampled past 16,384 characters a message), plus the margin. */
export async function estimatePromptTokens(messages: readonly ChatMessage[]): Promise<number> {
  return withPromptMargin(await estimateTextTokens(messages.map((m) => m.content)));
}

/** A cheap prompt size for budget reservations (settled with real counts afterwards), by the rule of thumb of core/common/rough-tokens.ts. */
export function roughTokens(request: ModelRequest): number {
  let chars = 0;
  for (const m of request.messages) chars += m.content.length;
  return roughTokensOfChars(chars);
}
