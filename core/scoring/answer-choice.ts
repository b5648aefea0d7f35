/**
 * The option an answer chose, for the `choice` rule: the last one it states. An option counts
 * only as a word of its own, never a letter inside a word (`I'd`, `e.g.`, `A-level`). Of the
 * options stated, the last one declared ("answer: C", "the answer is (C)", "I'd say C", "go with
 * C") wins; without a declaration, the last one marked (`(C)`, `C)`, `**C**`); else the last one
 * standing alone. A single-letter option in lower case counts only when declared or marked, and an
 * unmarked `A` or `I` before a lower-case word is the article or the pronoun ("A good question",
 * "I think"), not an option.
 * Runs on: Node (core).
 */
import { answerTail } from './answer-text.js';

/** Words that declare the option after them, with an optional "is", "would be", colon... */
const DECLARED =
  /(?:\banswer|\boption|\bchoice|\bchoose|\bchose|\bchoosing|\bpick|\bpicked|\bselect|\bselected|\bsay|\bgo with|\bgoing with|\bwent with|\bguess)\s*(?:(?:is|would be|will be|must be|should be)\s*|[:=\-]\s*)?(?:(?:option|choice|letter)\s*)?[(\[*_]*$/iu;
const MARKED_BEFORE = /[(\[*_]$/u;
const MARKED_AFTER = /^[)\]*_]/u;
const ARTICLE_OR_PRONOUN = /^[ai]$/iu;
const LOWER_WORD_NEXT = /^ \p{Ll}/u;

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

type Strength = 0 | 1 | 2;

/** How an occurrence of an option reads: declared (2), marked (1), alone (0), or not an option (null). */
function strengthOf(text: string, at: number, found: string): Strength | null {
  const before = text.slice(Math.max(0, at - 40), at);
  const after = text.slice(at + found.length, at + found.length + 2);
  const declared = DECLARED.test(before);
  const marked = MARKED_BEFORE.test(before) || MARKED_AFTER.test(after);
  if (found.length === 1) {
    // "A good question", "I think", "the answer is a tough one": words of the sentence.
    if (ARTICLE_OR_PRONOUN.test(found) && !marked && LOWER_WORD_NEXT.test(after)) return null;
    if (found === found.toLowerCase() && found !== found.toUpperCase() && !declared && !marked) return null;
  }
  return declared ? 2 : marked ? 1 : 0;
}

/** The option an answer chose (as `choices` spells it), or null when it states none. */
export function extractChoice(response: string, choices: readonly string[]): string | null {
  const text = answerTail(response);
  const alt = [...choices].sort((a, b) => b.length - a.length).map(escapeRegex).join('|');
  // Not inside a word: no letter, digit or apostrophe on either side, nor a hyphen or dot joining a letter.
  const re = new RegExp(`(?<![\\p{L}\\p{N}'’]|[\\p{L}][-.])(${alt})(?![\\p{L}\\p{N}'’]|[-.]\\p{L})`, 'giu');
  let best: { strength: Strength; found: string } | null = null;
  for (const m of text.matchAll(re)) {
    const strength = strengthOf(text, m.index, m[1]!);
    if (strength !== null && (best === null || strength >= best.strength)) best = { strength, found: m[1]! };
  }
  if (best === null) return null;
  const found = best.found.toLowerCase();
  return choices.find((c) => c.toLowerCase() === found) ?? null;
}
