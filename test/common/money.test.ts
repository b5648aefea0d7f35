/**
 * The one money formatter of the app and the command line: cents from a cent up, two significant
 * digits below (never "$0.0000" for a paid call), the same function on both sides.
 * Runs on: Node (tests).
 */
import { describe, expect, it } from 'vitest';
import { formatUsd as cliUsd } from '../../core/cli/common.js';
import { formatUsd } from '../../core/common/money.js';
import { formatUsd as appUsd } from '../../renderer/src/format.js';

describe('formatUsd', () => {
  it.each([
    [0, '$0.00'],
    [0.07, '$0.07'],
    [0.01, '$0.01'],
    [1234.5, '$1234.50'],
    [0.0041, '$0.0041'],
    [0.00412, '$0.0041'],
    [0.000012, '$0.000012'],
    [0.0000004, '$0.00000040'],
    [0.0099, '$0.0099'],
    [-0.5, '-$0.50'],
    [Number.NaN, '—'],
  ])('%d reads %s', (n, text) => {
    expect(formatUsd(n)).toBe(text);
  });

  it('never prints a paid call as nothing', () => {
    for (let e = -12; e < -2; e++) expect(formatUsd(1.5 * 10 ** e)).toMatch(/^\$0\.0*15$/);
  });

  it('is the one function the app and the command line use', () => {
    expect(appUsd).toBe(formatUsd);
    expect(cliUsd).toBe(formatUsd);
  });
});
