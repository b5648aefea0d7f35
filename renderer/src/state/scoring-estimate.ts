/**
 * What a run's scoring will add to its price before it is created: each LLM judge's calls (one
 * per record and judge: the prompt, the answer and the rubric in; a short verdict out, or what the
 * judge answered before), at the judge's own catalog price; and the most that retries of hard fails
 * can add (each retry asks the candidate again: at most `retryOnHardFail` times the sweep, reached
 * only if every answer fails hard). An estimate, and labelled as one.
 * Runs on: renderer.
 */
import type { CatalogModelEntry, ModelCost, ScoringConfig } from '../api/types.js';
import { PER_MESSAGE_TOKENS, roughTokensOfChars } from '../../../core/common/rough-tokens.js';
import type { RunEstimate } from './run-estimate.js';

/** Tokens a judge's prompt template adds around the prompt, answer and rubric. */
export const JUDGE_TEMPLATE_TOKENS = 64;
/** Output tokens per judge call assumed for a judge that has never answered here. */
export const ASSUMED_VERDICT_TOKENS = 64;

export interface JudgeEstimate {
  judge: string;
  calls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface ScoringEstimate {
  judges: JudgeEstimate[];
  judgeCostUsd: number;
  /** The most retries of hard fails could cost (every answer failing hard, every retry made). */
  retryUpToUsd: number;
  /** The sweep and the judges. */
  totalUsd: number;
}

export function estimateScoring(input: {
  config: ScoringConfig;
  sweep: RunEstimate;
  vignettes: number;
  epochs: number;
  catalog: ReadonlyMap<string, CatalogModelEntry>;
  history: readonly ModelCost[];
}): ScoringEstimate {
  const records = input.vignettes * input.epochs * input.sweep.models.length;
  // What one judge call reads besides its rubric: the vignette's prompt and the candidate's answer, on average.
  const promptPerCall = records === 0 ? 0 : input.sweep.inputTokens / records - PER_MESSAGE_TOKENS;
  const answerPerCall = records === 0 ? 0 : input.sweep.outputTokens / records;
  const judges: JudgeEstimate[] = [];
  let retryUpToUsd = 0;
  for (const scorer of input.config.scorers) {
    const retries = 'retryOnHardFail' in scorer && typeof scorer.retryOnHardFail === 'number' ? scorer.retryOnHardFail : 0;
    retryUpToUsd += retries * input.sweep.costUsd;
    if (scorer.type !== 'judge') continue;
    const rubricTokens = roughTokensOfChars(scorer.rubric.length);
    for (const judge of scorer.judges) {
      const entry = input.catalog.get(judge);
      const past = input.history.find((h) => h.model === judge);
      const perCallOut = past && past.calls > 0 && past.outputTokens + past.cachedOutputTokens > 0 ? (past.outputTokens + past.cachedOutputTokens) / past.calls : ASSUMED_VERDICT_TOKENS;
      const inputTokens = Math.round(records * (promptPerCall + answerPerCall + rubricTokens + JUDGE_TEMPLATE_TOKENS));
      const outputTokens = Math.round(records * perCallOut);
      const costUsd = entry ? (inputTokens / 1e6) * entry.inputPerMTok + (outputTokens / 1e6) * entry.outputPerMTok : 0;
      judges.push({ judge, calls: records, inputTokens, outputTokens, costUsd });
    }
  }
  const judgeCostUsd = judges.reduce((s, j) => s + j.costUsd, 0);
  return { judges, judgeCostUsd, retryUpToUsd, totalUsd: input.sweep.costUsd + judgeCostUsd };
}
