/**
 * The one count formatter of the app and the command line groups as the platform's en-US
 * formatter does, though it groups whole numbers by hand (no ICU load at the CLI's start).
 * Runs on: Node (tests).
 */
import { describe, expect, it } from 'vitest';
import { formatInt as cliInt } from '../../core/cli/common.js';
import { formatInt } from '../../core/common/numbers.js';
import { formatInt as appInt } from '../../renderer/src/format.js';

describe('formatInt', () => {
  it.each([
    [0, '0'],
    [999, '999'],
    [1000, '1,000'],
    [1_234_567_890, '1,234,567,890'],
    [-4_321, '-4,321'],
    [12.5, '12.5'],
  ])('%d reads %s', (n, text) => {
    expect(formatInt(n)).toBe(text);
  });

  it('groups as Intl.NumberFormat en-US does', () => {
    const intl = new Intl.NumberFormat('en-US');
    const cases = [0, 7, 999, 1000, 12_345, 999_999, 1_000_000, 1_234_567_890, -4_321, 2 ** 53 - 1, 12.5, 2 ** 60];
    expect.assertions(cases.length);
    for (const n of cases) expect(formatInt(n)).toBe(intl.format(n));
  });

  it('is the one function the app and the command line use', () => {
    expect(appInt).toBe(formatInt);
    expect(cliInt).toBe(formatInt);
  });
});
