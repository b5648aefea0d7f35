/**
 * A run's price before it is created: input tokens from the manifest's prompt text (about four
 * characters a token, plus a chat template's few tokens per message, by core/common/rough-tokens.ts),
 * output tokens from what each model typically answered in earlier runs (else the max-tokens
 * setting, else a stated guess), at the catalog's prices (core/common/cost.ts). An estimate, and
 * labelled as one: it cannot know what the cache will answer.
 * Runs on: renderer.
 */
import { estCostUsd } from '../../../core/common/cost.js';
import { PER_MESSAGE_TOKENS, roughTokensOfChars } from '../../../core/common/rough-tokens.js';
import type { CatalogModelEntry, ModelCost } from '../api/types.js';

/** Output tokens per call assumed for a model that has never answered here and has no max tokens set. */
export const ASSUMED_OUTPUT_TOKENS = 256;

export interface ModelEstimate {
  model: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** Where the output figure came from. */
  outputFrom: 'history' | 'max tokens' | 'assumed';
}

export interface RunEstimate {
  models: ModelEstimate[];
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export function estimateRun(input: {
  vignettes: number;
  promptChars: number;
  epochs: number;
  models: readonly CatalogModelEntry[];
  history: readonly ModelCost[];
  maxTokens: number | null;
}): RunEstimate {
  const perPassInput = roughTokensOfChars(input.promptChars) + PER_MESSAGE_TOKENS * input.vignettes;
  const models = input.models.map((m): ModelEstimate => {
    const past = input.history.find((h) => h.model === m.id);
    const answered = past ? past.outputTokens + past.cachedOutputTokens : 0;
    let perCall: number;
    let outputFrom: ModelEstimate['outputFrom'];
    if (past && past.calls > 0 && answered > 0) {
      perCall = answered / past.calls;
      outputFrom = 'history';
      if (input.maxTokens !== null) perCall = Math.min(perCall, input.maxTokens);
    } else if (input.maxTokens !== null) {
      perCall = input.maxTokens;
      outputFrom = 'max tokens';
    } else {
      perCall = ASSUMED_OUTPUT_TOKENS;
      outputFrom = 'assumed';
    }
    const inputTokens = perPassInput * input.epochs;
    const outputTokens = Math.round(perCall * input.vignettes * input.epochs);
    const costUsd = estCostUsd({ inputTokens, outputTokens }, m);
    return { model: m.id, inputTokens, outputTokens, costUsd, outputFrom };
  });
  return {
    models,
    inputTokens: models.reduce((s, m) => s + m.inputTokens, 0),
    outputTokens: models.reduce((s, m) => s + m.outputTokens, 0),
    costUsd: models.reduce((s, m) => s + m.costUsd, 0),
  };
}
