/**
 * Numbers in an answer, for `match` with `numeric: true`: `1,000`, `$1,000`, `1e3`, `42.0`, `-5`,
 * `−5` (the minus sign), `.5`, `50%`. Thousands separators are commas between groups of three
 * digits (`1,5` is two numbers); a currency sign before the digits is dropped; a percent sign
 * after them is kept as part of what the number says (`50%` is not `50`, nor `0.5`).
 * Runs on: Node (core).
 */
import { stripSurrounding } from './answer-text.js';

/** A number as an answer states it. */
export interface StatedNumber {
  value: number;
  percent: boolean;
}

// A number not inside a word or another number: sign, currency, digits (grouped by commas in
// threes, or not), a fraction, an exponent, a percent sign. Each part's characters are disjoint
// from the next part's, so the scan is linear.
const NUMBER = /(?<![\p{L}\p{N}.])([-+\u2212]?)[$€£¥]?((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(e[-+]?\d+)?(?!\d)(%?)/giu;

function parse(sign: string, digits: string, exponent: string | undefined): number {
  return Number(`${sign === '' ? '' : '-+'.includes(sign) ? sign : '-'}${digits.replace(/,/g, '')}${exponent ?? ''}`);
}

/** Every number the text states, in order. */
export function statedNumbers(text: string): StatedNumber[] {
  const found: StatedNumber[] = [];
  for (const m of text.matchAll(NUMBER)) {
    const value = parse(m[1]!, m[2]!, m[3]);
    if (Number.isFinite(value)) found.push({ value, percent: m[4] === '%' });
  }
  return found;
}

/** The number a text is, when it states exactly one and nothing else but punctuation (`**$1,000**`, `42.`). */
export function soleNumber(text: string): StatedNumber | null {
  const numbers = statedNumbers(text);
  if (numbers.length !== 1 || stripSurrounding(text.replace(NUMBER, '')) !== '') return null;
  return numbers[0]!;
}

/** Equal as numbers: the same kind (percent or not) and within a relative 1e-9. */
export function sameNumber(a: StatedNumber, b: StatedNumber): boolean {
  return a.percent === b.percent && Math.abs(a.value - b.value) <= 1e-9 * Math.max(1, Math.abs(a.value), Math.abs(b.value));
}

/** How a stated number reads in an explanation. */
export function showNumber(n: StatedNumber): string {
  return `${n.value}${n.percent ? '%' : ''}`;
}
