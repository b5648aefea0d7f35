/**
 * The mock provider: answers in-process, deterministically from the prompt, with configurable
 * latency and fault injection, so a sweep runs with no key and every failure path can be exercised.
 * Like a sampled model, a call at a temperature above 0 without a seed is a fresh draw in each run
 * (its run's id joins the hash; within a run a redelivered call repeats its answer); with a seed,
 * or at temperature 0 or unset, the same request gets the same answer in every run.
 * Options (provider- or host-level `options`):
 *   latencyMs, jitterMs   time per call (jitter is uniform +/-)
 *   errorRate             0..1, the share of calls that fail
 *   errorKind             rate_limit | server_error | timeout | empty_output | auth | bad_request
 *   retryAfterMs          the Retry-After a rate_limit failure carries
 *   outputTokens          fixed output length (default: 16..127, from the prompt's hash)
 *   judgeNoise            0..1: the host is a judge (see mock-judge.ts) that answers judge prompts
 *                         in the judge protocol, wrong this share of the time
 *   accuracy              0..1: answer a vignette that has a target with exactly the target at this
 *                         rate, deterministically per (model, vignette id, epoch, attempt), else a wrong answer
 * Runs on: Node (core).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { PanoptesError } from '../../domain.js';
import type { ResolvedHost } from '../catalog.js';
import type { ModelRequest } from '../model-client.js';
import type { HostClient, HostResponse } from './host-client.js';
import { mockJudgeAnswer } from './mock-judge.js';
import { knownAccuracyAnswer } from './known-accuracy.js';

export const MockOptionsSchema = z
  .object({
    latencyMs: z.number().nonnegative().default(0),
    jitterMs: z.number().nonnegative().default(0),
    errorRate: z.number().min(0).max(1).default(0),
    errorKind: z
      .enum(['rate_limit', 'server_error', 'timeout', 'empty_output', 'auth', 'bad_request'])
      .default('server_error'),
    retryAfterMs: z.number().nonnegative().default(50),
    outputTokens: z.number().int().positive().optional(),
    judgeNoise: z.number().min(0).max(1).optional(),
    accuracy: z.number().min(0).max(1).optional(),
  })
  .strict();
export type MockOptions = z.infer<typeof MockOptionsSchema>;

const WORDS = [
  'the', 'model', 'considers', 'evidence', 'carefully', 'and', 'answers', 'that', 'it', 'depends',
  'on', 'context', 'however', 'most', 'likely', 'outcome', 'is', 'clear', 'given', 'prompt',
  'a', 'patient', 'should', 'be', 'assessed', 'before', 'any', 'decision', 'because', 'risk',
];

/** Rough token count (about four characters a token), the same rule every mock call uses. */
export function mockTokenCount(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** FNV-1a over a string's UTF-16 code units, continuing from `h`: deterministic, and allocates nothing. */
function fnv1a(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** xorshift32: the next state (never 0 from a non-zero one). */
function xorshift(x: number): number {
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return x >>> 0;
}

const WORDS_WITH_STOP = WORDS.map((w) => `${w}.`);
/** Reused by every call: the answer is joined from it, so a call allocates its text and little else. */
const scratch: string[] = [];

/** What makes a sampled call a draw of its own: its run, when it sets a temperature above 0 and no seed; else nothing. */
export function drawOf(request: ModelRequest): string | undefined {
  const s = request.sampling;
  return s.seed === undefined && (s.temperature ?? 0) > 0 ? request.runId : undefined;
}

/**
 * The mock's deterministic answer to a request on one host: `[model] word word ... word.`, its
 * length (16..127 words) and words drawn from a hash of the host model, the seed (or the draw) and the messages.
 * Built as one flat string in one join: a sweep of a million mock calls should measure the engine,
 * not the mock's garbage.
 */
export function mockAnswer(hostModel: string, request: ModelRequest, outputTokens?: number): { text: string; outputTokens: number } {
  let h = fnv1a(0x811c9dc5, hostModel);
  h = fnv1a(h ^ 0xff, String(request.sampling.seed ?? 0));
  const draw = drawOf(request);
  if (draw !== undefined) h = fnv1a(h ^ 0xfd, draw);
  for (const m of request.messages) h = fnv1a(fnv1a(h ^ 0xfe, m.role), m.content);
  let x = h || 1;
  x = xorshift(x);
  const n = outputTokens ?? 16 + (x % 112);
  scratch.length = n + 1;
  scratch[0] = `[${hostModel}]`;
  for (let i = 1; i <= n; i++) {
    x = xorshift(x);
    scratch[i] = (i === n ? WORDS_WITH_STOP : WORDS)[x % WORDS.length]!;
  }
  const text = scratch.join(' ');
  scratch.length = 0;
  return { text, outputTokens: n };
}

/** The model name the known-accuracy draws hash: the model itself, or with the run's draw joined (the text never shows it). */
function drawnModel(hostModel: string, request: ModelRequest): string {
  const draw = drawOf(request);
  return draw === undefined ? hostModel : `${hostModel}\u0000${draw}`;
}

function knownAccuracy(hostModel: string, vignetteId: string, epoch: number, target: string, accuracy: number, attempt: number) {
  const text = knownAccuracyAnswer(hostModel, vignetteId, epoch, target, accuracy, attempt);
  return { text, outputTokens: mockTokenCount(text) };
}

function failure(kind: MockOptions['errorKind'], retryAfterMs: number): PanoptesError {
  switch (kind) {
    case 'rate_limit':
      return new PanoptesError('rate_limited', 'mock: 429 Too Many Requests', { retryable: true, retryAfterMs });
    case 'server_error':
      return new PanoptesError('server_error', 'mock: 500 Internal Server Error', { retryable: true });
    case 'timeout':
      return new PanoptesError('timeout', 'mock: request timed out', { retryable: true });
    case 'empty_output':
      return new PanoptesError('empty_output', 'mock: 200 with empty output', { retryable: true });
    case 'auth':
      return new PanoptesError('auth', 'mock: 401 Unauthorized', { retryable: false });
    case 'bad_request':
      return new PanoptesError('bad_request', 'mock: 400 Bad Request', { retryable: false });
  }
}

function resolveOptions(host: ResolvedHost): MockOptions {
  const merged = { ...(host.providerConfig.options ?? {}), ...(host.options ?? {}) };
  const parsed = MockOptionsSchema.safeParse(merged);
  if (!parsed.success) {
    throw new PanoptesError('invalid_input', `mock host ${host.id}: ${parsed.error.issues[0]?.message}`, {
      where: `hosts.${host.id}.options`,
    });
  }
  return parsed.data;
}

export class MockHostClient implements HostClient {
  private readonly cache = new WeakMap<ResolvedHost, MockOptions>();

  async call(host: ResolvedHost, request: ModelRequest): Promise<HostResponse> {
    let opts = this.cache.get(host);
    if (!opts) {
      opts = resolveOptions(host);
      this.cache.set(host, opts);
    }
    const started = performance.now();
    const latency = Math.max(0, opts.latencyMs + (opts.jitterMs ? (Math.random() * 2 - 1) * opts.jitterMs : 0));
    if (latency > 0) {
      try {
        await sleep(latency, undefined, { signal: request.signal });
      } catch {
        // Cancelled like a real provider's call: the caller's doing, nothing against the host.
        throw new PanoptesError('cancelled', `${host.id}: call cancelled`, { retryable: false });
      }
    } else await new Promise<void>((resolve) => setImmediate(resolve)); // a real turn of the event loop, as I/O would give
    if (request.signal?.aborted) throw new PanoptesError('cancelled', `${host.id}: call cancelled`, { retryable: false });
    if (opts.errorRate > 0 && Math.random() < opts.errorRate) throw failure(opts.errorKind, opts.retryAfterMs);
    const verdict = opts.judgeNoise === undefined ? undefined : mockJudgeAnswer(host.model, request, opts.judgeNoise);
    const target = request.vignette?.target;
    const { text, outputTokens } =
      verdict !== undefined
        ? { text: verdict, outputTokens: mockTokenCount(verdict) }
        : opts.accuracy !== undefined && target !== undefined
          ? knownAccuracy(drawnModel(host.model, request), request.vignette!.id, request.epoch ?? 1, target, opts.accuracy, request.attempt ?? 1)
          : mockAnswer(host.model, request, opts.outputTokens);
    const inputTokens = request.messages.reduce((n, m) => n + mockTokenCount(m.content), 0);
    return {
      text,
      usage: { inputTokens, outputTokens },
      latencyMs: performance.now() - started,
      finishReason: 'stop',
    };
  }
}
