/**
 * docs/guide/concepts.md names the code's own names: every type it quotes (`StoredResponse`,
 * `Usage.cachedTokens`) is declared in core/ or electron/, with the field it names, and every
 * field or function it quotes (`cachedInputTokens`) is written there, so a rename in the code
 * cannot leave the glossary behind.
 * Runs on: Node (tests).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sourcesUnder } from '../helpers/source-files.js';


const CODE = ['core', 'electron'].flatMap(sourcesUnder).map((file) => readFileSync(file, 'utf8')).join('\n');

/** The code names the page quotes: `Name`, `Name.field` or `camelCase`, not paths, commands or JSON keys. */
function quotedNames(page: string): string[] {
  const quoted = [...page.matchAll(/`([A-Za-z][A-Za-z0-9]*(?:\.[a-z][A-Za-z0-9]*)?)`/g)].map((m) => m[1]!);
  return [...new Set(quoted.filter((q) => /^[A-Z][a-z]/.test(q) || /^[a-z]+[A-Z]/.test(q)))];
}

function inCode(name: string): boolean {
  const [type, field] = name.split('.');
  if (/^[A-Z]/.test(type!)) {
    const declared = new RegExp(`\\b(?:class|interface|type|enum)\\s+${type}\\b`).test(CODE);
    return declared && (field === undefined || new RegExp(`\\b${field}\\??:`).test(CODE));
  }
  return new RegExp(`\\b${name}\\b`).test(CODE);
}

describe('the glossary', () => {
  const names = quotedNames(readFileSync('docs/guide/concepts.md', 'utf8'));

  it('quotes code names', () => {
    expect(names.length).toBeGreaterThan(15);
  });

  it('quotes only names the code has', () => {
    expect(names.filter((n) => !inCode(n))).toEqual([]);
  });

  it('notices a name the code does not have', () => {
    expect(inCode('StoredResponse')).toBe(true);
    expect(inCode('SlotScheduler')).toBe(false);
    expect(inCode('Usage.cachedTokens')).toBe(true);
    expect(inCode('Usage.billedTokens')).toBe(false);
  });
});
