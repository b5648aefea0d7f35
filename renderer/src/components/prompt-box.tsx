/**
 * What a vignette poses, above its answers: its system prompt and prompt, or, for a chat
 * vignette, its conversation turn by turn (the last user turn is what the models answered).
 * Runs on: renderer.
 */
import type { ChatTurn } from '../api/types.js';
import { AnswerText } from './answer-text.js';

export interface PosedVignette {
  prompt: string;
  system?: string | undefined;
  messages?: ChatTurn[] | undefined;
  target?: string | undefined;
}

export function PromptBox({ vignette }: { vignette: PosedVignette }) {
  return (
    <div className="prompt-box">
      {vignette.messages ? (
        <ol className="conversation" aria-label="conversation" data-testid="conversation">
          {vignette.messages.map((turn, i) => (
            <li key={i} className={`turn turn-${turn.role}`}>
              <span className="muted small turn-role">{turn.role}</span> <span className="turn-content" dir="auto">
                {turn.content}
              </span>
            </li>
          ))}
        </ol>
      ) : (
        <>
          {vignette.system ? (
            <div className="muted small">
              system: <span dir="auto">{vignette.system}</span>
            </div>
          ) : null}
          <AnswerText text={vignette.prompt} className="prompt-text" />
        </>
      )}
      {vignette.target !== undefined ? (
        <div className="muted small" data-testid="detail-target">
          target: <span dir="auto">{vignette.target}</span>
        </div>
      ) : null}
    </div>
  );
}
