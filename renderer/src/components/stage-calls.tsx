/**
 * A staged record's calls in the side-by-side view: one collapsed line per call (its stage, fan-out
 * item or judge round, tokens and time), opening to the prompt it was posed with and its answer.
 * Collapsed by default: the record's own answer, the last call's, is what the cell shows above.
 * Runs on: renderer.
 */
import type { ScoreDetail } from '../api/types.js';
import { formatInt } from '../format.js';

type DetailStage = NonNullable<ScoreDetail['responses'][number]['stages']>[number];

function label(s: DetailStage): string {
  if (s.item !== null) return `${s.stage} · item ${s.item + 1}`;
  if (s.round > 1) return `${s.stage} · round ${s.round}`;
  return s.stage;
}

export function StageCalls({ stages }: { stages: readonly DetailStage[] | undefined }) {
  if (!stages || stages.length === 0) return null;
  return (
    <details className="sbs-stages" data-testid="stage-calls">
      <summary className="muted small">
        {stages.length} stage call{stages.length === 1 ? '' : 's'} behind this answer
      </summary>
      <ol className="stage-calls">
        {stages.map((s, i) => (
          <li key={i} data-stage={s.stage}>
            <details className="stage-call">
              <summary>
                <span className="score-name">{label(s)}</span>{' '}
                <span className="muted small">
                  {formatInt(s.inputTokens)} in · {formatInt(s.outputTokens)} out · {formatInt(Math.round(s.latencyMs))} ms
                </span>
              </summary>
              <div className="muted small">prompt{s.round > 1 ? ' (posed again with the failed checks\u2019 explanations)' : ''}</div>
              <div className="sbs-text" dir="auto" data-part="prompt">
                {s.prompt ?? 'not known: the template no longer has this stage'}
              </div>
              <div className="muted small">answer</div>
              <div className="sbs-text" dir="auto" data-part="answer">
                {s.response}
              </div>
            </details>
          </li>
        ))}
      </ol>
    </details>
  );
}
