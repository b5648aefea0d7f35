import { describe, expect, it } from 'vitest';
import type { StoredResponse } from '../../core/domain.js';
import { CSV_COLUMNS, csvHeader, toCsvLine } from '../../core/export.js';

function record(over: Partial<StoredResponse>): StoredResponse {
  return {
    seq: 1, runId: 'r1', jobId: 1, vignetteId: 'v1', vignetteIndex: 1, model: 'mock-fast', epoch: 1,
    prompt: 'What is 2+2?', response: '4', usage: { inputTokens: 5, outputTokens: 1 },
    latencyMs: 12.4, host: 'mock/mock-fast', cached: false, sampling: {}, finishedAt: Date.UTC(2026, 10, 30),
    ...over,
  };
}

/** The cell of `column` in a line whose cells hold no commas or quotes. */
function cell(line: string, column: (typeof CSV_COLUMNS)[number]): string {
  return line.split(',')[CSV_COLUMNS.indexOf(column)]!;
}

describe('CSV export', () => {
  it('has one header cell per column', () => {
    expect(csvHeader().split(',')).toEqual([...CSV_COLUMNS]);
  });

  it.each(['=1+1', '+1', '-1', '@SUM(A1)', '\tx', '\rx'])('writes a response starting %j as text, not a formula', (text) => {
    const line = toCsvLine(record({ response: text }));
    const written = cell(line, 'response').replace(/^"|"$/g, '');
    expect(written.startsWith(`'`)).toBe(true);
    expect(written.slice(1)).toBe(text);
  });

  it("carries the call's cost when given", () => {
    expect(cell(toCsvLine(record({}), 0.000125), 'est_cost_usd')).toBe('0.000125');
  });

  it("carries the vignette's system prompt (empty without one)", () => {
    expect(cell(toCsvLine(record({ system: 'You are terse.' })), 'system')).toBe('You are terse.');
    expect(cell(toCsvLine(record({})), 'system')).toBe('');
  });

  it('escapes formulas in every text column, not only the response', () => {
    const line = toCsvLine(record({ prompt: '=cmd', vignetteId: '@id', target: '-x' }));
    expect(cell(line, 'prompt')).toBe(`'=cmd`);
    expect(cell(line, 'vignette_id')).toBe(`'@id`);
    expect(cell(line, 'target')).toBe(`'-x`);
  });

  it('leaves ordinary text and numbers as they are', () => {
    const line = toCsvLine(record({ response: 'Four. 2 + 2 = 4', usage: { inputTokens: 5, outputTokens: 7 } }));
    expect(cell(line, 'response')).toBe('Four. 2 + 2 = 4');
    expect(cell(line, 'input_tokens')).toBe('5');
    expect(line).not.toContain(`'`);
    expect(toCsvLine(record({ response: 'Four, I think' }))).toContain('"Four, I think"');
  });

  it('quotes a cell with a quote or a line break after escaping it', () => {
    const line = toCsvLine(record({ response: '=A1\n"quoted"' }));
    expect(line).toContain(`"'=A1\n""quoted"""`);
  });
});
