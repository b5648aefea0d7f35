/**
 * One rule of thumb for tokens before a tokenizer counts them: the app's run estimate and the
 * router's budget reservations both take about four characters a token.
 * Runs on: Node (tests).
 */
import { describe, expect, it } from 'vitest';
import { roughTokensOfChars } from '../../core/common/rough-tokens.js';
import { roughTokens } from '../../core/models/router/token-estimate.js';
import { estimateRun } from '../../renderer/src/state/run-estimate.js';

describe('rough tokens', () => {
  it('counts four characters a token, rounding up', () => {
    expect([0, 1, 4, 5, 400].map(roughTokensOfChars)).toEqual([0, 1, 1, 2, 100]);
  });

  it('is the rule of the router and of the run estimate alike', () => {
    const prompt = 'x'.repeat(401);
    const request = { model: 'm', messages: [{ role: 'user' as const, content: prompt }], sampling: {}, privacy: 'off' as const, skipPromptCache: true };
    expect(roughTokens(request)).toBe(101);
    const model = { id: 'm', inputPerMTok: 1, outputPerMTok: 1 };
    const est = estimateRun({ vignettes: 1, promptChars: prompt.length, epochs: 1, models: [model as never], history: [], maxTokens: 1 });
    // The estimate adds one chat template's tokens around the vignette's one message.
    expect(est.inputTokens).toBe(101 + 8);
  });
});
