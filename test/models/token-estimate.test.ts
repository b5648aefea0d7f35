/**
 * Token estimates in linear time: texts that BPE cannot split (CJK, one repeated letter) cost a
 * bounded amount per message, the event loop gets its turns while they are counted, and the
 * estimate stays close to a whole count with the margin on top.
 * Runs on: Node (tests).
 */
import { countTokens } from 'gpt-tokenizer';
import { expect, it } from 'vitest';
import { CONTEXT_MARGIN, estimatePromptTokens, promptTokenBound } from '../../core/models/router/token-estimate.js';

/** Longest gap between the event loop's turns while `work` runs. */
async function longestLoopGap<T>(work: () => Promise<T>): Promise<{ result: T; gapMs: number }> {
  let gapMs = 0;
  let last = performance.now();
  let running = true;
  const tick = () => {
    const now = performance.now();
    gapMs = Math.max(gapMs, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const result = await work();
  running = false;
  return { result, gapMs };
}

function cjk(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String.fromCharCode(0x4e00 + ((i * 7919) % 20_000));
  return s;
}

it('counts 200,000 CJK characters, 200,000 `x` and 10 MB without holding the event loop', async () => {
  await estimatePromptTokens([{ role: 'user', content: 'warm up the tokenizer' }]);
  for (const content of [cjk(200_000), 'x'.repeat(200_000), 'x'.repeat(10 * 1024 * 1024)]) {
    const messages = [{ role: 'user' as const, content }];
    const { result, gapMs } = await longestLoopGap(() => estimatePromptTokens(messages));
    // Counted whole, the first took 40 s; counted in the tokenizer thread, the loop only slices the text.
    expect(gapMs).toBeLessThan(1000);
    expect(result).toBeGreaterThan(0);
    expect(result).toBeLessThanOrEqual(promptTokenBound(messages));
  }
}, 120_000);

it('is exact for short texts and close to a whole count for long ones that the tokenizer handles fast', async () => {
  const short = 'The quick brown fox jumps over the lazy dog.';
  const withMargin = (n: number) => Math.ceil((n + 8) * CONTEXT_MARGIN.ratio) + CONTEXT_MARGIN.tokens;
  expect(await estimatePromptTokens([{ role: 'user', content: short }])).toBe(withMargin(countTokens(short)));

  const prose = Array.from({ length: 8000 }, (_, i) => `sentence ${i} says something about item ${i % 97}.`).join(' ');
  const whole = withMargin(countTokens(prose));
  const estimate = await estimatePromptTokens([{ role: 'user', content: prose }]);
  expect(Math.abs(estimate - whole) / whole).toBeLessThan(0.1);
});
