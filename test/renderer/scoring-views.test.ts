/**
 * The scoring views' pure parts: the scoring file as the editor reads it (JSON, YAML, nonsense),
 * a pair read from either side of the matrix (and the model a run comparison's side names), how
 * scores, differences and p-values are written.
 * Runs on: Node (tests).
 */
import { describe, expect, it } from 'vitest';
import type { PairComparison } from '../../core/scoring/report-shape.js';
import { flipInterval, modelOfSide, pairOf } from '../../renderer/src/components/pairs.js';
import { formatDiff, formatInterval, formatPValue, formatScore } from '../../core/common/score-format.js';
import { parseScoringText } from '../../renderer/src/components/scoring-text.js';
import { SCORING_EXAMPLES } from '../../renderer/src/components/scoring-examples.js';

const pair: PairComparison = {
  a: 'mock-strong',
  b: 'mock-weak',
  n: 60,
  diff: 0.2,
  stderr: 0.05,
  ci95: [0.1, 0.3],
  p_value: 0.0002,
  test: 'paired_t',
  p_holm: 0.0002,
  min_detectable_diff: 0.14,
  ci_method: 't',
  verdict: 'a_better',
  distinguishable: true,
};

describe('the scoring file in the editor', () => {
  it('reads JSON and YAML into the same object', () => {
    const json = parseScoringText('{"scorers": [{"name": "exact", "type": "match"}]}');
    const yaml = parseScoringText('scorers:\n  - name: exact\n    type: match\n');
    expect(json).toEqual({ config: { scorers: [{ name: 'exact', type: 'match' }] }, error: null });
    expect(yaml).toEqual(json);
  });

  it('names the line of a syntax error', () => {
    expect(parseScoringText('{\n  "scorers": [\n    {"name": "exact",, "type": "match"}\n  ]\n}').error).toMatch(/^line 3: not valid JSON/);
    expect(parseScoringText('scorers:\n  - name: exact\n   type: match\n').error).toMatch(/^line 3: not valid YAML/);
  });

  it('refuses what is not a list of scorers, and leaves the definitions to the engine', () => {
    for (const text of ['[]', '42', 'null', '"scorers"', '{"scorer": []}', '{"scorers": {}}', 'scorers: 3']) {
      expect(parseScoringText(text).error, text).toMatch(/expected an object with a "scorers" list/);
    }
    expect(parseScoringText('{"scorers": []}').error).toBe('scorers: name at least one scorer');
    // An unknown type is the engine's to refuse, with the field it is in.
    expect(parseScoringText('{"scorers": [{"name": "x", "type": "nonsense"}]}').config).not.toBeNull();
  });

  it('stops a YAML alias bomb instead of expanding it', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 12 }, (_, i) => `${'b'.repeat(i + 1)}: &${'b'.repeat(i + 1)} [${Array(10).fill(i === 0 ? '*a' : `*${'b'.repeat(i)}`).join(', ')}]`), 'scorers: []'].join('\n');
    const started = Date.now();
    expect(parseScoringText(bomb).error).toMatch(/not valid YAML/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('offers examples that parse', () => {
    for (const example of SCORING_EXAMPLES) expect(parseScoringText(example.text).error, example.id).toBeNull();
  });
});

describe('a pair in the matrix', () => {
  it('reads row − column from either order the report holds', () => {
    expect(pairOf([pair], 'mock-strong', 'mock-weak')).toEqual(pair);
    const mirrored = pairOf([pair], 'mock-weak', 'mock-strong')!;
    expect(mirrored.diff).toBe(-0.2);
    expect(mirrored.ci95).toEqual([-0.3, -0.1]);
    expect([mirrored.a, mirrored.b]).toEqual(['mock-weak', 'mock-strong']);
    expect(mirrored.verdict).toBe('b_better');
    expect(pairOf([pair], 'mock-strong', 'mock-other')).toBeNull();
  });

  it('names the model of a comparison side, whatever the model id holds', () => {
    expect(modelOfSide('r1abc:mock-strong')).toBe('mock-strong');
    expect(modelOfSide('r1abc:ollama:llama3:8b')).toBe('ollama:llama3:8b');
    expect(modelOfSide('plain')).toBe('plain');
  });
});

describe('scores on screen', () => {
  it('writes scores, signed differences, intervals and p-values', () => {
    expect(formatScore(0.8)).toBe('0.800');
    expect(formatScore(null)).toBe('—');
    expect(formatScore(Number.NaN)).toBe('—');
    expect(formatDiff(0.2)).toBe('+0.200');
    expect(formatDiff(-0.05)).toBe('\u22120.050');
    expect(formatDiff(-0.0001)).toBe('0.000');
    expect(formatInterval([0.1, 0.3])).toBe('[0.100, 0.300]');
    expect(formatInterval([-0.1, 0.3], true)).toBe('[\u22120.100, +0.300]');
    expect(formatInterval(null)).toBe('—');
    expect(formatPValue(0.0002)).toBe('<0.001');
    expect(formatPValue(0.04)).toBe('0.040');
    expect(formatPValue(Number.POSITIVE_INFINITY)).toBe('—');
    expect(flipInterval([0.1, 0.3])).toEqual([-0.3, -0.1]);
    expect(flipInterval(null)).toBeNull();
  });
});
