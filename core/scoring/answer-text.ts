/**
 * How rules read an answer's text: Unicode's full case folding (not toLowerCase: `STRASSE` and
 * `straße` fold alike), NFKC (NFC and NFD `café`, full-width letters), whitespace runs as one
 * space, and the surrounding punctuation, symbols and markdown emphasis (`**Paris**`, `Paris.`)
 * stripped. Rules read at most the last `ANSWER_WINDOW` characters of an answer, so no answer,
 * however long, holds the event loop.
 * Runs on: Node (core).
 */
import { lookupFolding } from 'unicode-case-folding';

/** The most characters of an answer's end a rule normalizes and reads. */
export const ANSWER_WINDOW = 65_536;

/** Case folding maps nothing above this code point (the test checks every code point). */
const LAST_FOLDED = 0x1ffff;

/** The two such characters of everyday text (German, Greek), replaced natively before the rest. */
const COMMON_FOLDS: ReadonlyArray<readonly [string, string]> = [
  ['ß', 'ss'],
  ['ς', 'σ'],
];

let foldsAfterLowering: { re: RegExp; to: Map<string, string> } | undefined;

/**
 * The code points that lowercasing leaves as they are but folding changes (ß, ς, ſ, ligatures,
 * Cherokee small letters), and what each folds to: built once from the folding table.
 */
function lowercaseStableFolds(): { re: RegExp; to: Map<string, string> } {
  if (foldsAfterLowering) return foldsAfterLowering;
  const points: string[] = [];
  const to = new Map<string, string>();
  for (let cp = 0; cp <= LAST_FOLDED; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const folded = lookupFolding(cp);
    if (folded === undefined) continue;
    const c = String.fromCodePoint(cp);
    if (c.toLowerCase() !== c || COMMON_FOLDS.some(([from]) => from === c)) continue;
    points.push(`\\u{${cp.toString(16)}}`);
    to.set(c, String.fromCodePoint(...folded));
  }
  foldsAfterLowering = { re: new RegExp(`[${points.join('')}]`, 'gu'), to };
  return foldsAfterLowering;
}

/**
 * Unicode full case folding (CaseFolding.txt, statuses C and F). The engine's toLowerCase does
 * the bulk natively, and folding a lowercased character gives what folding the original gives,
 * so only the few characters lowercasing leaves alone are folded, from a table: a megabyte in
 * milliseconds, where folding every character took over a second.
 */
export function foldCase(text: string): string {
  const { re, to } = lowercaseStableFolds();
  let lowered = text.toLowerCase();
  for (const [from, into] of COMMON_FOLDS) lowered = lowered.replaceAll(from, into);
  return lowered.replace(re, (c) => to.get(c) ?? c);
}

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * NFKC, then full case folding, then NFKC again (folding can leave a string unnormalized). ASCII
 * text, most answers, is its own NFKC and folds as it lowercases: one native call.
 */
export function foldText(text: string): string {
  if (!NON_ASCII.test(text)) return text.toLowerCase();
  return foldCase(text.normalize('NFKC')).normalize('NFKC');
}

/** Whitespace, punctuation, symbols (markdown's `*`, `_`, `` ` ``, `~` among them) and invisible format characters. */
const SURROUNDING = /^[\s\p{P}\p{S}\p{Cf}]$/u;
const SIGN_OR_POINT = /^[-+\u2212.]$/u;
const DIGIT = /^\p{Nd}$/u;

/** ASCII whitespace, punctuation and symbols: what `SURROUNDING` says of each ASCII code, looked up. */
const ASCII_SURROUNDING = Uint8Array.from({ length: 128 }, (_, c) => (SURROUNDING.test(String.fromCharCode(c)) ? 1 : 0));

/** The code point at `i` as a string ('' past the end). */
function pointAt(text: string, i: number): string {
  const cp = text.codePointAt(i);
  return cp === undefined ? '' : String.fromCodePoint(cp);
}

/** The code point that ends at `end` (exclusive) as a string. */
function pointBefore(text: string, end: number): string {
  const low = text.charCodeAt(end - 1);
  return low >= 0xdc00 && low <= 0xdfff && end >= 2 ? text.slice(end - 2, end) : text.slice(end - 1, end);
}

function surrounds(c: string): boolean {
  const code = c.charCodeAt(0);
  return code < 128 ? ASCII_SURROUNDING[code] === 1 : SURROUNDING.test(c);
}

/**
 * The text without what surrounds it; a sign or decimal point before a digit stays (`-5`, `.5`).
 * Only the ends are walked, so a long text costs what its surroundings do.
 */
export function stripSurrounding(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end) {
    const c = pointAt(text, start);
    if (!surrounds(c) || (SIGN_OR_POINT.test(c) && DIGIT.test(pointAt(text, start + c.length)))) break;
    start += c.length;
  }
  while (end > start) {
    const c = pointBefore(text, end);
    if (!surrounds(c)) break;
    end -= c.length;
  }
  return start === 0 && end === text.length ? text : text.slice(start, end);
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
  return stripSurrounding(foldText(text).replace(/\s+/g, ' '));
}
