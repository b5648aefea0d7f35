/**
 * docs/guide/troubleshooting.md quotes the messages users see word for word: each bold quoted
 * message is found in one source file of core/ or electron/, its CAPITALS and `…` standing for what
 * varies and every run of literal words between them written there as the page spells it (in any
 * order: a message may be put together from parts, `${path} ${what}, not a Panoptes database`).
 * Runs on: Node (tests).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sourcesUnder } from '../helpers/source-files.js';

const PAGE = 'docs/guide/troubleshooting.md';


const SOURCES = ['core', 'electron'].flatMap(sourcesUnder).map((file) => readFileSync(file, 'utf8'));

/** The messages the page quotes: every **`...`** span. */
function quotedMessages(page: string): string[] {
  return [...page.matchAll(/\*\*`([^`]+)`\*\*/g)].map((m) => m[1]!);
}

/** A quoted message's literal parts: what is left between its CAPITAL words and its `…`. */
function literalsOf(message: string): string[] {
  return message
    .split(/…|\b[A-Z][A-Z0-9_]*\b/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function foundInCode(message: string): boolean {
  const literals = literalsOf(message);
  return SOURCES.some((text) => literals.every((l) => text.includes(l)));
}

describe('the troubleshooting page', () => {
  const messages = quotedMessages(readFileSync(PAGE, 'utf8'));

  it('quotes the messages', () => {
    expect(messages.length).toBeGreaterThan(30);
  });

  it('quotes each message as the code writes it', () => {
    expect(messages.filter((m) => !foundInCode(m))).toEqual([]);
  });

  it('refuses a message the code does not write', () => {
    expect(foundInCode('run RUN is STATUS and owned by another scheduler')).toBe(true);
    expect(foundInCode('run RUN is STATUS and held by another scheduler')).toBe(false);
  });
});
