/**
 * The Scorer seam: one scoring instrument, at one version, applied to one response. Rules, code
 * plugins and LLM judges all implement it, so the scoring work queue, re-scoring of stored runs and
 * scoring as records land never learn which layer a scorer belongs to.
 * Runs on: Node (core).
 */
import type { PrivacyMode, ScorerKind, Severity } from '../domain.js';

/**
 * The run's rules for model calls, which a scorer that calls models (an LLM judge) obeys as the
 * sweep does: the run's privacy mode (the router still applies an instance's lock), and whether to skip the prompt cache.
 */
export interface RunCallPolicy {
  privacy: PrivacyMode;
  skipPromptCache: boolean;
}

/** What a scorer sees of one record: the vignette as the manifest gave it, and the answer. */
export interface ScoreInput {
  runId: string;
  model: string;
  epoch: number;
  vignette: {
    id: string;
    prompt: string;
    system?: string;
    target?: string;
    metadata?: Record<string, unknown>;
  };
  response: string;
  /** How the run's own calls were made; a judge's calls for this record are made the same way. */
  calls: RunCallPolicy;
  /** For a pairwise judge: the baseline model's answer to the same vignette at the same epoch. */
  baseline?: { response: string };
}

export type { Severity };
/** The severity a scorer declares for its failures: a check that fails is hard or soft, never none. */
export type FailSeverity = Exclude<Severity, 'none'>;

/** One verdict. A scorer with several judges returns one per judge. */
export interface ScoreValue {
  /** In [0, 1]. */
  value: number;
  /** For pass/fail scorers; null for graded ones. */
  passed: boolean | null;
  severity: Severity;
  /** Why, in a sentence a person reads (a rule's finding, a plugin's message, a judge's reason). */
  explanation: string;
  /** The judge's logical model for an LLM judge; null for rules and plugins. */
  judge: string | null;
  /** For an LLM judge: what the engine stores beside the verdict. */
  judgeCall?: JudgeCallFacts;
}

/** What one judge's consultation on one answer was: its flags, and the calls it cost. */
export interface JudgeCallFacts {
  /** The judge is the candidate model itself (or the same underlying model): it grades its own answer. */
  selfJudged: boolean;
  /** The judge's answer could not be read as a verdict: the value is 0 and the explanation quotes it. */
  unreadable: boolean;
  /**
   * The judge calls behind this verdict (pairwise: two), accounted apart from the sweep's own.
   * Like ModelUsage: tokens of calls answered from the prompt cache are counted apart, unbilled.
   */
  usage: { calls: number; inputTokens: number; outputTokens: number; cachedCalls: number; cachedInputTokens: number; cachedOutputTokens: number };
}

export interface Scorer {
  /** The name the scoring file gives it; reports are asked for by this name. */
  readonly name: string;
  /** A hash of the whole definition (rules, plugin source, judge models, rubric, sampling). */
  readonly version: string;
  readonly kind: ScorerKind;
  /** The judges this scorer consults, in order; empty for rules and plugins. */
  readonly judges: readonly string[];
  /**
   * A pairwise judge's baseline model, one of the run's: its answer to the same vignette and epoch
   * comes as `input.baseline`. Unset for a judge against a baseline file, which reads its own answers.
   */
  readonly baseline?: string;
  /**
   * Scores one response. Rejects for a failure worth retrying later (a judge call that failed), or
   * with an UnscorableRecord when retrying cannot help.
   */
  score(input: ScoreInput, signal?: AbortSignal): Promise<ScoreValue[]>;
  /** Frees what the scorer holds (a plugin's sandbox thread); it may not score after. */
  close?(): Promise<void>;
}

/**
 * A record this scorer cannot score, and trying again would give the same (a plugin that throws or
 * returns something that is not a score): stored as failed to score at once, with the reason.
 */
export class UnscorableRecord extends Error {
  override readonly name = 'UnscorableRecord';
}

/**
 * The scorer cannot go on at all (a plugin whose thread kept crashing): the scorekeeper stores
 * the reason with the scorer version and scores nothing more with it, in this process or after a restart.
 */
export class ScorerStopped extends Error {
  override readonly name = 'ScorerStopped';
}
