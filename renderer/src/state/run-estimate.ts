/**
 * A run's price before it is created: input tokens from the manifest's prompt text (about four
 * characters a token, plus a chat template's few tokens per message), output tokens from what each
 * model typically answered in earlier runs (else the max-tokens setting, else a stated guess), at
 * the catalog's prices. An estimate, and labelled as one: it cannot know what the cache will answer.
 * Runs on: renderer.
 */
import type { CatalogModelEntry, ModelCost } from '../api/types.js';

/** Characters per token for English-like text, the usual rule of thumb. */
export const CHARS_PER_TOKEN = 4;
/** Tokens a chat template adds around a prompt. */
export const TEMPLATE_TOKENS = 8;
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
  const perPassInput = Math.ceil(input.promptChars / CHARS_PER_TOKEN) + TEMPLATE_TOKENS * input.vignettes;
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
    const costUsd = (inputTokens / 1e6) * m.inputPerMTok + (outputTokens / 1e6) * m.outputPerMTok;
    return { model: m.id, inputTokens, outputTokens, costUsd, outputFrom };
  });
  return {
    models,
    inputTokens: models.reduce((s, m) => s + m.inputTokens, 0),
    outputTokens: models.reduce((s, m) => s + m.outputTokens, 0),
    costUsd: models.reduce((s, m) => s + m.costUsd, 0),
  };
}
