/**
 * How a provider's failure becomes a PanoptesError the router can act on: the error code, whether
 * retrying (elsewhere) could help, when a rate-limited host may be tried again (Retry-After in
 * seconds or as an HTTP date, or OpenAI's retry-after-ms), and the HTTP status for the penalty's
 * scope. Quota exhaustion hides behind 400 and 429 as often as 402, so bodies are read too. Every
 * message passes through `redactSecrets` first: providers echo keys back in 401 bodies.
 * Runs on: Node (core).
 */
import { PanoptesError, type BilledTries, type ErrorCode, type Usage } from '../../domain.js';
import { redactSecrets } from './secrets.js';

/** A failure reported by a host, with the HTTP status when there was one. */
export class ProviderFailure extends PanoptesError {
  readonly status: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    opts: { retryable: boolean; status?: number; retryAfterMs?: number; cause?: unknown },
  ) {
    super(code, message, {
      retryable: opts.retryable,
      ...(opts.retryAfterMs === undefined ? {} : { retryAfterMs: opts.retryAfterMs }),
      ...(opts.cause === undefined ? {} : { cause: opts.cause }),
    });
    this.status = opts.status;
  }
}

/** Anything with a case-insensitive `get`, as fetch's and the SDKs' Headers are. */
export interface HeaderLookup {
  get(name: string): string | null | undefined;
}

const QUOTA_BODY =
  /insufficient_quota|quota[_ ]exceeded|exceeded your current quota|out of credits|insufficient[_ ]credits|credit balance is too low|billing|payment required|spend limit|usage limit reached/i;
const CONTEXT_BODY =
  /context_length_exceeded|maximum context length|context window|prompt is too long|too many tokens|input is too long|reduce the length/i;

/** Milliseconds from a Retry-After value (delta-seconds or HTTP date), or undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** The wait a response asks for: OpenAI's `retry-after-ms` first (more precise), else `retry-after`. */
export function retryAfterFrom(headers: HeaderLookup | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms));
  return parseRetryAfter(headers.get('retry-after'), now);
}

/** The provider's own words: `error.message` of a JSON body, else the body itself, short. */
export function bodyMessage(body: unknown): string {
  let text: string;
  if (typeof body === 'string') {
    try {
      return bodyMessage(JSON.parse(body) as unknown);
    } catch {
      text = body;
    }
  } else if (body && typeof body === 'object') {
    const err = (body as { error?: unknown }).error;
    const msg =
      (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string'
        ? (err as { message: string }).message
        : undefined) ??
      (typeof err === 'string' ? err : undefined) ??
      (typeof (body as { message?: unknown }).message === 'string' ? (body as { message: string }).message : undefined);
    text = msg ?? JSON.stringify(body);
  } else {
    text = String(body ?? '');
  }
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}

/** Maps an HTTP failure of one host to a ProviderFailure. `body` is the parsed JSON or raw text. */
export function failureFromHttp(
  hostId: string,
  status: number,
  headers: HeaderLookup | undefined,
  body: unknown,
  secrets: readonly string[] = [],
): ProviderFailure {
  const raw = typeof body === 'string' ? body : JSON.stringify(body ?? '');
  const detail = redactSecrets(bodyMessage(body), secrets);
  const say = (what: string) => `${hostId}: ${what} (HTTP ${status})${detail ? `: ${detail}` : ''}`;
  const retryAfterMs = retryAfterFrom(headers);
  const withWait = retryAfterMs === undefined ? {} : { retryAfterMs };
  if (status === 402 || ((status === 400 || status === 429 || status === 403) && QUOTA_BODY.test(raw))) {
    return new ProviderFailure('quota', say('quota or credit exhausted'), { retryable: false, status, ...withWait });
  }
  if (status === 429) return new ProviderFailure('rate_limited', say('rate limited'), { retryable: true, status, ...withWait });
  if (status === 401 || status === 403) {
    return new ProviderFailure('auth', say(status === 401 ? 'key refused' : 'access denied'), { retryable: false, status });
  }
  if (status === 408) return new ProviderFailure('timeout', say('request timeout'), { retryable: true, status, ...withWait });
  if (status === 413 || (status === 400 && CONTEXT_BODY.test(raw))) {
    return new ProviderFailure('bad_request', say('prompt too large for this host'), { retryable: false, status: 413 });
  }
  if (status >= 500 || status === 409) {
    return new ProviderFailure('server_error', say('server error'), { retryable: true, status, ...withWait });
  }
  return new ProviderFailure('bad_request', say(status === 404 ? 'not found' : 'request refused'), { retryable: false, status });
}

/** A failure before any HTTP status: the caller cancelled, the host took too long, or the socket failed. */
export function failureFromNetwork(hostId: string, err: unknown, kind: 'abort' | 'timeout' | 'connection', secrets: readonly string[] = []): PanoptesError {
  const why = redactSecrets(err instanceof Error ? err.message : String(err), secrets);
  if (kind === 'abort') return new PanoptesError('cancelled', `${hostId}: call cancelled`, { retryable: false });
  if (kind === 'timeout') return new ProviderFailure('timeout', `${hostId}: timed out`, { retryable: true });
  return new ProviderFailure('connection', `${hostId}: connection failed: ${why}`, { retryable: true });
}

/**
 * An answer that arrived but says nothing: counted as a failure, never as a success. The provider
 * still billed the tokens it reports: they are the failure's `billed`, for the budget, the metrics
 * and the usage ledgers.
 */
export function emptyOutput(hostId: string, finishReason?: string | null, usage?: Usage): ProviderFailure {
  const failure = new ProviderFailure('empty_output', `${hostId}: empty answer${finishReason ? ` (finish reason ${finishReason})` : ''}`, {
    retryable: true,
  });
  if (usage && usage.inputTokens + usage.outputTokens > 0) failure.billed = { calls: 1, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
  return failure;
}

/** Adds one failure's billed tries to a call's. */
export function addBilled(into: BilledTries, more: BilledTries): void {
  into.calls += more.calls;
  into.inputTokens += more.inputTokens;
  into.outputTokens += more.outputTokens;
}

type ErrorClass = abstract new (...args: never[]) => Error;

/** The error classes an SDK (openai, @anthropic-ai/sdk) throws; both SDKs share this shape. */
export interface SdkErrorClasses {
  APIError: ErrorClass;
  APIUserAbortError: ErrorClass;
  APIConnectionTimeoutError: ErrorClass;
  APIConnectionError: ErrorClass;
}

/** Maps an SDK's thrown error to a PanoptesError (its HTTP status, headers and parsed body when it has them). */
export function failureFromSdk(hostId: string, err: unknown, sdk: SdkErrorClasses, secrets: readonly string[]): PanoptesError {
  if (err instanceof PanoptesError) return err;
  if (err instanceof sdk.APIUserAbortError) return failureFromNetwork(hostId, err, 'abort', secrets);
  if (err instanceof sdk.APIConnectionTimeoutError) return failureFromNetwork(hostId, err, 'timeout', secrets);
  if (err instanceof sdk.APIConnectionError) return failureFromNetwork(hostId, err, 'connection', secrets);
  if (err instanceof sdk.APIError) {
    const e = err as Error & { status?: number; headers?: HeaderLookup; error?: unknown };
    if (typeof e.status === 'number') return failureFromHttp(hostId, e.status, e.headers, e.error ?? e.message, secrets);
  }
  const message = redactSecrets(err instanceof Error ? err.message : String(err), secrets);
  return new ProviderFailure('server_error', `${hostId}: ${message}`, { retryable: true });
}
