/**
 * Models with a known accuracy: the hit rate over many vignettes is the stated accuracy, the
 * decision is a pure function of (model, vignette id, epoch), epochs and models draw independently,
 * and a miss never equals the target the way the `match` scorer compares (trimmed, case-folded).
 */
import { describe, expect, it } from 'vitest';
import { answersTarget, knownAccuracyAnswer, wrongAnswer } from '../../core/models/providers/known-accuracy.js';

const fold = (s: string) => s.trim().toLowerCase();

describe('answersTarget', () => {
  it.each([0.8, 0.6, 0.5, 0.05, 0.97])('hits within 0.01 of p = %f over 10,000 vignettes', (p) => {
    let hits = 0;
    for (let i = 0; i < 10_000; i++) if (answersTarget('mock-strong', `q-${i}`, 1, p)) hits++;
    expect(Math.abs(hits / 10_000 - p)).toBeLessThan(0.01);
  });

  it('never hits at p = 0 and always hits at p = 1', () => {
    for (let i = 0; i < 2_000; i++) {
      expect(answersTarget('m', `v${i}`, 1 + (i % 3), 0)).toBe(false);
      expect(answersTarget('m', `v${i}`, 1 + (i % 3), 1)).toBe(true);
    }
  });

  it('is deterministic: the same inputs give the same decision, call after call', () => {
    const first = Array.from({ length: 500 }, (_, i) => answersTarget('mock-weak', `id-${i}`, 2, 0.6));
    const again = Array.from({ length: 500 }, (_, i) => answersTarget('mock-weak', `id-${i}`, 2, 0.6));
    expect(again).toEqual(first);
  });

  it('draws epochs and models independently (the joint hit rate is p squared)', () => {
    const n = 20_000;
    let bothEpochs = 0;
    let bothModels = 0;
    for (let i = 0; i < n; i++) {
      if (answersTarget('mock-strong', `v${i}`, 1, 0.5) && answersTarget('mock-strong', `v${i}`, 2, 0.5)) bothEpochs++;
      if (answersTarget('mock-strong', `v${i}`, 1, 0.5) && answersTarget('mock-weak', `v${i}`, 1, 0.5)) bothModels++;
    }
    // 0.25 with a binomial sd of ~0.003 at this n: 0.015 is five sd.
    expect(Math.abs(bothEpochs / n - 0.25)).toBeLessThan(0.015);
    expect(Math.abs(bothModels / n - 0.25)).toBeLessThan(0.015);
  });

  it('keeps field boundaries apart: ("ab", "c") is not ("a", "bc")', () => {
    let differ = 0;
    for (let i = 0; i < 200; i++) {
      if (answersTarget(`m${i}a`, 'b', 1, 0.5) !== answersTarget(`m${i}`, 'ab', 1, 0.5)) differ++;
    }
    expect(differ).toBeGreaterThan(50);
  });

  it.each([NaN, -0.1, 1.5, Infinity])('refuses the absurd accuracy %f', (p) => {
    expect(() => answersTarget('m', 'v', 1, p)).toThrow(/accuracy must be in \[0, 1\]/);
  });
});

describe('wrongAnswer', () => {
  it('gives another option letter for a choice-style target, in the same case', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 400; i++) {
      const w = wrongAnswer('B', 'mock-weak', `v${i}`, 1);
      expect(w).toMatch(/^[A-E]$/);
      expect(w).not.toBe('B');
      seen.add(w);
      const lower = wrongAnswer(' c ', 'mock-weak', `v${i}`, 1);
      expect(lower).toMatch(/^[abde]$/);
    }
    expect([...seen].sort()).toEqual(['A', 'C', 'D', 'E']);
    // A late letter widens the options up to itself.
    for (let i = 0; i < 100; i++) expect(wrongAnswer('H', 'm', `v${i}`, 1)).toMatch(/^[A-G]$/);
  });

  it('gives another number for a numeric target', () => {
    for (let i = 0; i < 200; i++) {
      const w = wrongAnswer('42', 'm', `v${i}`, 3);
      expect(Number(w)).toBeGreaterThan(42);
      expect(Number(w)).toBeLessThanOrEqual(51);
    }
    expect(wrongAnswer('-1', 'm', 'v', 1)).toMatch(/^-?\d+$/);
  });

  it.each(['Paris', 'paris ', 'None of the above.', 'NONE OF THE ABOVE', 'e', 'o', '', '   ', 'é', '🙂', 'x'.repeat(10_000)])(
    'never equals the target %j once trimmed and case-folded',
    (target) => {
      for (let i = 0; i < 50; i++) {
        const w = wrongAnswer(target, 'mock-weak', `v${i}`, 1 + (i % 4));
        expect(fold(w)).not.toBe(fold(target));
      }
    },
  );

  it('is deterministic', () => {
    expect(wrongAnswer('Paris', 'm', 'v7', 2)).toBe(wrongAnswer('Paris', 'm', 'v7', 2));
  });
});

describe('knownAccuracyAnswer', () => {
  it('answers exactly the target on a hit and something else on a miss', () => {
    let hits = 0;
    for (let i = 0; i < 10_000; i++) {
      const hit = answersTarget('mock-strong', `v${i}`, 1, 0.8);
      const answer = knownAccuracyAnswer('mock-strong', `v${i}`, 1, 'Lisbon', 0.8);
      if (hit) {
        expect(answer).toBe('Lisbon');
        hits++;
      } else expect(fold(answer)).not.toBe('lisbon');
    }
    expect(Math.abs(hits / 10_000 - 0.8)).toBeLessThan(0.01);
  });
});
