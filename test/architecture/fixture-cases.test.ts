/**
 * Loops over reference fixtures cannot pass by accident: an empty or missing list of cases fails
 * the file instead of asserting nothing.
 * Runs on: Node (tests).
 */
import { describe, expect, it } from 'vitest';
import { casesOf } from '../helpers/fixture-cases.js';

describe('fixture cases', () => {
  it('refuses a list of no cases, or none at all, by name', () => {
    expect(() => casesOf([], 't_quantile')).toThrow(/no t_quantile cases/);
    expect(() => casesOf(undefined, 'holm')).toThrow(/no holm cases/);
  });

  it('hands over the cases there are', () => {
    const cases = [{ p: 0.5 }];
    expect(casesOf(cases, 'p')).toBe(cases);
  });
});
