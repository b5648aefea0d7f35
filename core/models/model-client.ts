/**
 * The ModelClient seam: one call to one model. Providers implement it for one host; the router
 * implements it over many. Errors are PanoptesErrors whose `retryable` and `retryAfterMs` tell the
 * caller whether and when another try could help.
 * Runs on: Node (core).
 */
import type { BilledTries, ChatTurn, HostWait, PrivacyMode, Sampling, Usage } from '../domain.js';

/** A message of a call: a vignette's turn, a judge's prompt. */
export type ChatMessage = ChatTurn;

export interface ModelRequest {
  /** The logical model id from the catalog (the router resolves it to hosts). */
  model: string;
  messages: ChatMessage[];
  sampling: Sampling;
  privacy: PrivacyMode;
  /** Skip the prompt cache for this call (no read, no write); its record is kept like any other. */
  skipPromptCache: boolean;
  /** The epoch this call belongs to: part of the prompt-cache key unless epochs share a cache. */
  epoch?: number;
  shareCacheAcrossEpochs?: boolean;
  signal?: AbortSignal;
  /** The run this call serves: stamped on the lines the router logs about it. */
  runId?: string;
  /**
   * The profile this call is made and accounted under: its keys, its budgets, the tag on its
   * metrics. Default: the router's own. Judge calls run under `judge`, apart from the sweep's.
   */
  profile?: string;
  /**
   * The vignette this call poses: its id and target. Real providers never see it; the mock models
   * with a known accuracy answer from it (the target, or a wrong answer, per vignette and epoch).
   * With `runId` and `epoch` it names the call's sample: the prompt cache never answers a sample
   * with a sibling's answer from the same run (see PromptCache).
   */
  vignette?: { id: string; target?: string };
  /**
   * Which try at this sample the call is: 1 (the default) is the sweep's own, 2 and on a scorer's
   * retry of a hard fail. Retries skip the prompt cache (a cached answer would repeat the failed
   * one); the mock models with a known accuracy draw each attempt anew.
   */
  attempt?: number;
  /**
   * Told when the call starts waiting for a host that is down (every host it could use refuses
   * connections), and with null when it stops waiting: the job shows "waiting for host".
   */
  onHostWait?: (wait: HostWait | null) => void;
}

export interface ModelResponse {
  text: string;
  usage: Usage;
  /** The physical host that answered: `provider/provider-model-id`. */
  host: string;
  cached: boolean;
  latencyMs: number;
  finishReason?: string;
  /** Host tries before this answer that a provider billed without an answer (empty ones): paid for too. */
  billedBefore?: BilledTries;
}

/**
 * Why a client cannot call a model: it is not in the client's catalog, or none of its hosts has its
 * key (the environment variables any one of which would do).
 */
export type Unavailable = { kind: 'not_in_catalog' } | { kind: 'no_key'; keyEnvs: string[] };

export interface ModelClient {
  /** Whether this client can answer calls for the logical model. */
  serves(model: string): boolean;
  generate(request: ModelRequest): Promise<ModelResponse>;
  /** Why `serves(model)` is false, for errors people read. */
  unavailableReason?(model: string): Unavailable | undefined;
  /** Releases sockets, native models and timers. */
  close?(): Promise<void>;
}
