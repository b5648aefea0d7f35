/**
 * The price estimate New run shows above its Create button: cost and tokens, and how the output
 * side was guessed for each model that has no earlier answers to go by.
 * Runs on: renderer.
 */
import { formatInt, formatUsd } from '../format.js';
import type { RunEstimate } from '../state/run-estimate.js';

export function EstimatePanel({ estimate }: { estimate: RunEstimate }) {
  const guessed = estimate.models.filter((m) => m.outputFrom !== 'history');
  return (
    <div className="estimate" data-testid="run-estimate">
      <span>
        Estimated: <strong data-testid="estimate-cost">{formatUsd(estimate.costUsd)}</strong> for about{' '}
        {formatInt(estimate.inputTokens)} input and {formatInt(estimate.outputTokens)} output tokens
      </span>
      <span className="muted small">
        {' '}
        (prompts at ~4 characters a token; answers as long as each model's earlier answers
        {guessed.length > 0
          ? `, except ${guessed.map((m) => `${m.model} (${m.outputFrom === 'max tokens' ? 'max tokens' : 'no answers yet: 256 assumed'})`).join(', ')}`
          : ''}
        ; calls the prompt cache answers cost nothing)
      </span>
    </div>
  );
}
