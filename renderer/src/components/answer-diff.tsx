/**
 * An answer with its differences from another highlighted, word by word (jsdiff's `diffWords`):
 * words only this answer has are marked, words only the other has are shown struck through. Two
 * answers too far apart (past a bound on the edit script, so a long answer never stalls the page)
 * are shown as they are, with a note. A long answer collapses as every answer does (`AnswerText`).
 * Runs on: renderer.
 */
import { diffWords } from 'diff';
import { useMemo } from 'react';
import { AnswerText } from './answer-text.js';

/** The longest edit script worth computing: past it, the answers have little in common anyway. */
const MAX_EDITS = 2000;

export function AnswerDiff({ text, against }: { text: string; against: string | null }) {
  const parts = useMemo(() => (against === null || against === text ? null : diffWords(against, text, { maxEditLength: MAX_EDITS })), [text, against]);
  if (against === null) return <AnswerText text={text} />;
  if (parts === null) return <AnswerText text={text} />;
  if (parts === undefined) {
    return (
      <AnswerText text={text}>
        {text}
        <p className="muted small">Too different to highlight word by word.</p>
      </AnswerText>
    );
  }
  return (
    <AnswerText text={text}>
      {parts.map((p, i) =>
        p.added ? (
          <ins key={i} className="diff-added">
            {p.value}
          </ins>
        ) : p.removed ? (
          <del key={i} className="diff-removed">
            {p.value}
          </del>
        ) : (
          <span key={i}>{p.value}</span>
        ),
      )}
    </AnswerText>
  );
}
