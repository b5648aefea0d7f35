/**
 * The price estimate New run shows above its Create button: cost and tokens, and how the output
 * side was guessed for each model that has no earlier answers to go by; with scorers, the judges'
 * calls and the most retries of hard fails could add, apart, and the total with the judges.
 * Runs on: renderer.
 */
import { formatInt, formatUsd } from '../format.js';
import type { RunEstimate } from '../state/run-estimate.js';
import type { ScoringEstimate } from '../state/scoring-estimate.js';

function ScoringLine({ scoring }: { scoring: ScoringEstimate }) {
  if (scoring.judges.length === 0 && scoring.retryUpToUsd === 0) return null;
  return (
    <div className="estimate-scoring" data-testid="estimate-scoring">
      {scoring.judges.length > 0 ? (
        <span>
          Judges: <strong data-testid="estimate-judges">{formatUsd(scoring.judgeCostUsd)}</strong> for {formatInt(scoring.judges.reduce((s, j) => s + j.calls, 0))} calls (
          {scoring.judges.map((j) => `${j.judge} ${formatUsd(j.costUsd)}`).join(', ')}) ·{' '}
        </span>
      ) : null}
      {scoring.retryUpToUsd > 0 ? <span>retries of hard fails: up to {formatUsd(scoring.retryUpToUsd)} · </span> : null}
      <span>
        in all: <strong data-testid="estimate-total">{formatUsd(scoring.totalUsd)}</strong>
        {scoring.retryUpToUsd > 0 ? `, up to ${formatUsd(scoring.totalUsd + scoring.retryUpToUsd)} if every answer failed hard` : ''}
      </span>
    </div>
  );
}

export function EstimatePanel({ estimate, scoring = null }: { estimate: RunEstimate; scoring?: ScoringEstimate | null }) {
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
      {scoring ? <ScoringLine scoring={scoring} /> : null}
    </div>
  );
}
