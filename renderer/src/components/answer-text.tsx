/**
 * A model's answer (or any long text a person or a model wrote), shown in its own direction
 * (`dir="auto"`: Hebrew and Arabic read right to left) and, when long, collapsed to a few lines
 * with "Show all": a 10,000-token answer does not make the page thousands of pixels tall.
 * Runs on: renderer.
 */
import { useState, type ReactNode } from 'react';
import { formatInt } from '../format.js';

/** Longer than this (characters) or with more lines than this starts collapsed. */
const LONG_CHARS = 600;
const LONG_LINES = 8;

export function isLongText(text: string): boolean {
  if (text.length > LONG_CHARS) return true;
  let lines = 1;
  for (let i = text.indexOf('\n'); i !== -1 && lines <= LONG_LINES; i = text.indexOf('\n', i + 1)) lines++;
  return lines > LONG_LINES;
}

/** `children`, when given, is shown in place of the plain text (the text marked up, as the diff does); `text` still decides what is long. */
export function AnswerText({ text, className = 'sbs-text', children }: { text: string; className?: string; children?: ReactNode }) {
  const long = isLongText(text);
  const [open, setOpen] = useState(false);
  const collapsed = long && !open;
  return (
    <>
      <div className={`${className}${collapsed ? ' collapsed' : ''}`} dir="auto" data-testid="answer-text" data-collapsed={collapsed ? 'true' : 'false'}>
        {children ?? text}
      </div>
      {long ? (
        <button type="button" className="link-button small" aria-expanded={open} onClick={() => setOpen(!open)} data-testid="show-all">
          {open ? 'Show less' : `Show all (${formatInt(text.length)} characters)`}
        </button>
      ) : null}
    </>
  );
}
