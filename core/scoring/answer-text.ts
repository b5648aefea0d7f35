/**
 * How rules read an answer's text: Unicode's full case folding (not toLowerCase: `STRASSE` and
 * `straße` fold alike), NFKC (NFC and NFD `café`, full-width letters), whitespace runs as one
 * space, and the surrounding punctuation, symbols and markdown emphasis (`**Paris**`, `Paris.`)
 * stripped. Rules read at most the last `ANSWER_WINDOW` characters of an answer, so no answer,
 * however long, holds the event loop.
 * Runs on: Node (core).
 */
import { caseFold, lookupFolding } from 'unicode-case-folding';

/** The most characters of an answer's end a rule normalizes and reads. */
export const ANSWER_WINDOW = 65_536;

/** Case folding maps nothing above this code point (the test checks every code point). */
const LAST_FOLDED = 0x1ffff;

let foldsAfterLowering: RegExp | undefined;

/**
 * The code points that lowercasing leaves as they are but folding changes (ß, ς, ſ, ligatures,
 * Cherokee small letters): built once from the folding table.
 */
function lowercaseStableFolds(): RegExp {
  if (foldsAfterLowering) return foldsAfterLowering;
  const points: string[] = [];
  for (let cp = 0; cp <= LAST_FOLDED; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    if (lookupFolding(cp) === undefined) continue;
    const c = String.fromCodePoint(cp);
    if (c.toLowerCase() === c) points.push(`\\u{${cp.toString(16)}}`);
  }
  foldsAfterLowering = new RegExp(`[${points.join('')}]`, 'gu');
  return foldsAfterLowering;
}

/**
 * Unicode full case folding (CaseFolding.txt, statuses C and F). The engine's toLowerCase does
 * the bulk natively, and folding a lowercased character gives what folding the original gives,
 * so only the few characters lowercasing leaves alone are folded one by one: a megabyte in
 * milliseconds, where folding every character took over a second.
 */
export function foldCase(text: string): string {
  return text.toLowerCase().replace(lowercaseStableFolds(), (c) => caseFold(c));
}

/** NFKC, then full case folding, then NFKC again (folding can leave a string unnormalized). */
export function foldText(text: string): string {
  return foldCase(text.normalize('NFKC')).normalize('NFKC');
}

/** Whitespace, punctuation, symbols (markdown's `*`, `_`, `` ` ``, `~` among them) and invisible format characters. */
const SURROUNDING = /^[\s\p{P}\p{S}\p{Cf}]$/u;
const SIGN_OR_POINT = /^[-+\u2212.]$/u;
const DIGIT = /^\p{Nd}$/u;

/** The text without what surrounds it; a sign or decimal point before a digit stays (`-5`, `.5`). */
export function stripSurrounding(text: string): string {
  const chars = Array.from(text);
  let start = 0;
  let end = chars.length;
  while (start < end && SURROUNDING.test(chars[start]!) && !(SIGN_OR_POINT.test(chars[start]!) && DIGIT.test(chars[start + 1] ?? ''))) start += 1;
  while (end > start && SURROUNDING.test(chars[end - 1]!)) end -= 1;
  return chars.slice(start, end).join('');
}

/** The answer's last `ANSWER_WINDOW` characters (whole code points), or all of it. */
export function answerTail(text: string): string {
  if (text.length <= ANSWER_WINDOW) return text;
  let from = text.length - ANSWER_WINDOW;
  const c = text.charCodeAt(from);
  if (c >= 0xdc00 && c <= 0xdfff) from += 1;
  return text.slice(from);
}

/** The text as `match` compares it: folded, whitespace runs as one space, surroundings stripped. */
export function normalizeAnswer(text: string): string {
  return stripSurrounding(foldText(text).replace(/\s+/gu, ' '));
}
