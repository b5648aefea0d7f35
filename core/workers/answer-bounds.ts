/**
 * The bounds every answer must keep before it becomes a record, whoever produced it (a provider
 * through the router, or a remote worker over the wire): token counts that are whole, non-negative
 * and plausible, a finite latency, a finish time near the attempt's, and response text of a size the
 * database, the export and the wire can carry. An answer outside them is refused whole, naming
 * the field, so that one absurd value cannot make a run unexportable or its totals meaningless.
 * Runs on: Node (core).
 */
import { z } from 'zod';
import { PanoptesError } from '../domain.js';

/** Tokens one call may report, per field: far above any model's window, far below float trouble. */
export const MAX_RECORD_TOKENS = 100_000_000;
/** The longest latency one call may report: a day. */
export const MAX_LATENCY_MS = 86_400_000;
/** How far a finish time may sit before the attempt started, or after now: clocks of two machines differ. */
export const CLOCK_SKEW_MS = 5 * 60_000;
/** Response text a record may hold unless PANOPTES_MAX_RESPONSE_BYTES says otherwise. */
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
/** The most PANOPTES_MAX_RESPONSE_BYTES may allow: a remote worker's frame must still carry one record. */
export const MAX_RESPONSE_BYTES_CEILING = 6 * 1024 * 1024;

const TokenCount = z
  .number()
  .int('must be a whole number')
  .min(0, 'must not be negative')
  .max(MAX_RECORD_TOKENS, `must be at most ${MAX_RECORD_TOKENS}`);

/** One call's usage, as a record carries it (the wire's per-record usage is this, strictly). */
export const RecordUsageSchema = z.object({
  inputTokens: TokenCount,
  outputTokens: TokenCount,
  cachedTokens: TokenCount.optional(),
  reasoningTokens: TokenCount.optional(),
});

export const LatencySchema = z
  .number()
  .min(0, 'must not be negative')
  .max(MAX_LATENCY_MS, `must be at most ${MAX_LATENCY_MS} ms`);

/** What of an answer the bounds look at. */
export interface BoundedAnswer {
  response: string;
  usage: unknown;
  latencyMs: number;
  finishedAt: number;
}

export interface AnswerWindow {
  /** When the attempt that produced the answer started, on this machine's clock. */
  startedAt: number;
  /** Now, on this machine's clock. */
  now: number;
  maxResponseBytes: number;
}

/** The first bound `a` breaks, as `field: why`, or null when it keeps them all. */
export function answerViolation(a: BoundedAnswer, w: AnswerWindow): string | null {
  const usage = RecordUsageSchema.safeParse(a.usage);
  if (!usage.success) {
    const issue = usage.error.issues[0]!;
    const field = issue.path.map(String).join('.');
    const value = field === '' ? a.usage : (a.usage as Record<string, unknown>)[field];
    return `usage${field === '' ? '' : `.${field}`} ${shown(value)}: ${issue.message}`;
  }
  const latency = LatencySchema.safeParse(a.latencyMs);
  if (!latency.success) return `latencyMs ${shown(a.latencyMs)}: ${latency.error.issues[0]!.message}`;
  if (!Number.isSafeInteger(a.finishedAt)) return `finishedAt ${shown(a.finishedAt)}: must be a whole number of milliseconds`;
  if (a.finishedAt < w.startedAt - CLOCK_SKEW_MS) {
    return `finishedAt ${a.finishedAt}: ${w.startedAt - a.finishedAt} ms before the attempt started (at most ${CLOCK_SKEW_MS} ms of clock skew)`;
  }
  if (a.finishedAt > w.now + CLOCK_SKEW_MS) {
    return `finishedAt ${a.finishedAt}: ${a.finishedAt - w.now} ms in the future (at most ${CLOCK_SKEW_MS} ms of clock skew)`;
  }
  const bytes = utf8Bytes(a.response, w.maxResponseBytes);
  if (bytes > w.maxResponseBytes) {
    return `response: ${bytes} bytes, over the ${w.maxResponseBytes}-byte limit (PANOPTES_MAX_RESPONSE_BYTES)`;
  }
  return null;
}

/** Throws a provider's answer out when it breaks a bound: the call fails with a clear error. */
export function assertAnswerBounds(a: BoundedAnswer, w: AnswerWindow, host: string): void {
  const violation = answerViolation(a, w);
  if (violation !== null) {
    throw new PanoptesError('server_error', `${host} answered out of bounds: ${violation}`, { retryable: false, where: host });
  }
}

/** The UTF-8 size of `text`, exact when it could be near `limit` (a string's length bounds it cheaply). */
function utf8Bytes(text: string, limit: number): number {
  // Each UTF-16 unit is 1 to 3 bytes of UTF-8.
  if (text.length * 3 <= limit) return text.length;
  return Buffer.byteLength(text, 'utf8');
}

function shown(value: unknown): string {
  return typeof value === 'number' || typeof value === 'bigint' ? String(value) : JSON.stringify(value) ?? String(value);
}

const responseLimits = new Map<string, number>();

/** PANOPTES_MAX_RESPONSE_BYTES (bytes of response text per record), else 4 MiB. */
export function maxResponseBytes(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.PANOPTES_MAX_RESPONSE_BYTES;
  if (text === undefined || text === '') return DEFAULT_MAX_RESPONSE_BYTES;
  const known = responseLimits.get(text);
  if (known !== undefined) return known;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > MAX_RESPONSE_BYTES_CEILING) {
    throw new PanoptesError(
      'invalid_input',
      `PANOPTES_MAX_RESPONSE_BYTES must be a whole number of bytes from 1 to ${MAX_RESPONSE_BYTES_CEILING}, got "${text}"`,
      { where: 'PANOPTES_MAX_RESPONSE_BYTES' },
    );
  }
  responseLimits.set(text, n);
  return n;
}
