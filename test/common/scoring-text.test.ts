/**
 * One rule reads a scoring file's text on the command line and in the app: `{` first is JSON,
 * anything else YAML, and a syntax error says where.
 * Runs on: Node (tests).
 */
import { describe, expect, it } from 'vitest';
import { parseScoringSyntax } from '../../core/common/scoring-text.js';

describe('parseScoringSyntax', () => {
  it('reads text that opens with { as JSON, after white space', () => {
    expect(parseScoringSyntax('\n  {"scorers": []}')).toEqual({ ok: true, value: { scorers: [] } });
  });

  it('reads anything else as YAML', () => {
    expect(parseScoringSyntax('scorers:\n  - name: exact\n    type: match\n')).toEqual({ ok: true, value: { scorers: [{ name: 'exact', type: 'match' }] } });
  });

  it('names the line and column of a JSON error, and the line of a YAML one', () => {
    expect(parseScoringSyntax('{\n  "scorers": [1 2]\n}')).toMatchObject({ ok: false, syntax: 'JSON', line: 2, column: 17 });
    expect(parseScoringSyntax('{"scorers": [')).toMatchObject({ ok: false, syntax: 'JSON', line: 1 });
    expect(parseScoringSyntax('scorers:\n  - name: exact\n   type: match\n')).toMatchObject({ ok: false, syntax: 'YAML', line: 3, column: null });
  });

  it('refuses a YAML alias bomb instead of expanding it', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`)].join('\n');
    expect(parseScoringSyntax(bomb)).toMatchObject({ ok: false, syntax: 'YAML' });
  });
});
