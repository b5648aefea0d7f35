/**
 * The input bounds (core/common/input-bounds.ts) are the contract's: a value at a bound is taken
 * by the contract's schema, one past it refused, and the forms' text names the same bounds.
 * Runs on: Node (tests).
 */
import { describe, expect, it } from 'vitest';
import { CONCURRENCY, DECIDE_BATCH, EPOCHS, MAX_TOKENS, ORDER_SEED, RUN_NAME_MAX, wholeRangeText } from '../../core/common/input-bounds.js';
import { CreateRunInputSchema } from '../../core/service/contract.js';

const run = (over: Record<string, unknown>) => CreateRunInputSchema.safeParse({ manifestPath: 'm.jsonl', models: ['mock-strong'], epochs: 1, ...over }).success;

describe('input bounds', () => {
  it('are the bounds createRun takes and refuses', () => {
    expect([run({ epochs: EPOCHS.max }), run({ epochs: EPOCHS.max + 1 }), run({ epochs: EPOCHS.min - 1 })]).toEqual([true, false, false]);
    expect([run({ concurrency: CONCURRENCY.max }), run({ concurrency: CONCURRENCY.max + 1 })]).toEqual([true, false]);
    expect([run({ sampling: { maxTokens: MAX_TOKENS.max } }), run({ sampling: { maxTokens: MAX_TOKENS.max + 1 } })]).toEqual([true, false]);
    expect([run({ name: 'x'.repeat(RUN_NAME_MAX) }), run({ name: 'x'.repeat(RUN_NAME_MAX + 1) })]).toEqual([true, false]);
    const decided = (u: Record<string, unknown>) => run({ untilDecided: u });
    expect([decided({ orderSeed: ORDER_SEED.max }), decided({ orderSeed: ORDER_SEED.max + 1 }), decided({ batch: DECIDE_BATCH.max + 1 })]).toEqual([true, false, false]);
  });

  it('are written as a form says them', () => {
    expect(wholeRangeText(EPOCHS)).toBe('a whole number from 1 to 10,000');
    expect(wholeRangeText(ORDER_SEED)).toBe('a whole number from 0 to 4,294,967,295');
  });
});
