/**
 * Retries on hard fails (`retryOnHardFail: N`): when a scorer finds a record a hard fail, the same
 * vignette is posed to the same model again, with the run's sampling and privacy mode, and the new
 * answer is scored by the same scorer, until one passes or N retries are spent. Each attempt is
 * kept beside the record; the Scorekeeper stores them with the page that asked for them.
 *
 * Why the statistics keep the first attempt: a model that is retried until it passes looks better
 * than it is. Reports read attempt 1 (the sweep's own record) unless asked for the final one.
 *
 * A retry never comes from the prompt cache, which would give back the very answer that failed; the
 * mock models with a known accuracy draw each attempt anew. A retry whose call fails (after the
 * router's own failover) ends the retries: the last scored attempt stands, and its explanation says
 * why no further attempt was made.
 * Runs on: Node (core).
 */
import { toPanoptesError, type PrivacyMode, type Sampling } from '../domain.js';
import type { ModelClient } from '../models/model-client.js';
import type { AttemptStore, NewAttempt } from '../store/attempt-store.js';
import { isStoppedByDisk } from '../store/disk-full.js';
import type { NewScore, RecordToScore, RunScorer } from '../store/score-store.js';
import { assertAnswerBounds, maxResponseBytes } from '../workers/answer-bounds.js';
import { messagesOf } from '../workers/run-eval.js';
import type { ScoreInput, ScoreValue } from './scorer.js';

/** A verdict list is a hard fail when any of its verdicts is (a failed check of a hard scorer, any judge). */
export function isHardFail(values: readonly ScoreValue[]): boolean {
  return values.some((v) => v.severity === 'hard');
}

/** How the run's own calls were made: its retries are made the same way. */
export interface RetryRun {
  runId: string;
  sampling: Sampling;
  privacy: PrivacyMode;
}

/** What the worker hands over for one record it found a hard fail. */
export interface HardFail {
  rs: RunScorer;
  record: RecordToScore;
  input: ScoreInput;
  /** The record's own verdicts, as they are to be stored. */
  first: NewScore[];
  /** Retries to spend: the scorer's retryOnHardFail. */
  limit: number;
  /** Scores an attempt's answer as the worker scores a record (with its tries): verdicts, or why it could not. */
  score: (input: ScoreInput) => Promise<ScoreValue[] | { error: string }>;
  /** A verdict as stored for the record. */
  toScore: (v: ScoreValue) => NewScore;
}

/** The record's verdicts (their explanation may gain a note) and the attempts to store with them. */
export interface RetryOutcome {
  first: NewScore[];
  attempts: NewAttempt[];
}

export class HardFailRetrier {
  constructor(
    /** The client a scorer version's retries are posed through (the scorekeeper's bills them to it). */
    private readonly clientOf: (scorerId: number) => ModelClient,
    private readonly stored: AttemptStore,
  ) {}

  /**
   * Poses the record's vignette again until an attempt is no hard fail or the limit is spent. A
   * record whose retries are already stored (a page scored again after its failed records were
   * given another chance) is not retried twice.
   */
  async retry(run: RetryRun, hf: HardFail, signal: AbortSignal): Promise<RetryOutcome> {
    if (this.stored.retried(hf.rs.scorerId, hf.record.seq)) return { first: hf.first, attempts: [] };
    const attempts: NewAttempt[] = [];
    let standing = hf.first;
    for (let attempt = 2; attempt <= hf.limit + 1 && !signal.aborted; attempt++) {
      let posed: Omit<NewAttempt, 'scores' | 'attempt'>;
      try {
        posed = await this.pose(this.clientOf(hf.rs.scorerId), run, hf.record, attempt, signal);
      } catch (err) {
        if (isStoppedByDisk(err)) throw err;
        noted(standing, `retry ${attempt} got no answer (${toPanoptesError(err).message}): this attempt stands`);
        break;
      }
      const values = await hf.score({ ...hf.input, response: posed.response });
      if (!Array.isArray(values)) {
        attempts.push({ ...posed, attempt, scores: [] });
        noted(standing, `attempt ${attempt} was answered but could not be scored (${values.error}): this attempt stands`);
        break;
      }
      const verdicts = values.map(hf.toScore);
      // The very verdicts stored with the attempt, so a note added later lands in what is stored.
      attempts.push({ ...posed, attempt, scores: verdicts });
      standing = verdicts;
      if (!isHardFail(values)) break;
    }
    return { first: hf.first, attempts };
  }

  private async pose(client: ModelClient, run: RetryRun, r: RecordToScore, attempt: number, signal: AbortSignal): Promise<Omit<NewAttempt, 'scores' | 'attempt'>> {
    const v = r.vignette;
    const startedAt = Date.now();
    const res = await client.generate({
      model: r.model,
      messages: messagesOf({ ...v, index: r.vignetteIdx }),
      sampling: run.sampling,
      privacy: run.privacy,
      // A cached answer would be the one that failed.
      skipPromptCache: true,
      epoch: r.epoch,
      attempt,
      signal,
      runId: run.runId,
      vignette: v.target === undefined ? { id: v.id } : { id: v.id, target: v.target },
    });
    const finishedAt = Date.now();
    assertAnswerBounds(
      { response: res.text, usage: res.usage, latencyMs: res.latencyMs, finishedAt },
      { startedAt, now: finishedAt, maxResponseBytes: maxResponseBytes() },
      res.host,
    );
    return {
      seq: r.seq,
      model: r.model,
      response: res.text,
      inputTokens: res.usage.inputTokens,
      outputTokens: res.usage.outputTokens,
      latencyMs: res.latencyMs,
      host: res.host,
      finishedAt,
    };
  }
}

/** Says, in the explanation of the verdicts that stand, why no further attempt was made. */
function noted(verdicts: NewScore[], why: string): void {
  for (const v of verdicts) v.explanation = v.explanation === '' ? `[${why}]` : `${v.explanation} [${why}]`;
}
