/**
 * A chat vignette in the app, in real Chromium against a real engine: a manifest with a
 * conversation (system, user, assistant, user) and a single-turn vignette, answered by the mocks.
 * Responses lists its records and finds them by the last user turn; its side-by-side view and the
 * Results cell dialog show the conversation turn by turn, each turn's role and text (as text, never
 * markup), and a single-turn vignette's prompt as before.
 * Runs on: Node (tests), driving Chromium.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

const CHAT = [
  { role: 'system', content: 'Answer with one letter.' },
  { role: 'user', content: 'Pick <b>one</b> of A, B, C.' },
  { role: 'assistant', content: 'Of what, exactly?' },
  { role: 'user', content: 'Which letter comes second in the alphabet?' },
];

async function turnsOf(box: Locator): Promise<string[][]> {
  return box.locator('li.turn').evaluateAll((els) => els.map((el) => [el.querySelector('.turn-role')!.textContent!, el.querySelector('.turn-content')!.textContent!.trim()]));
}

/** The vignette id of each record row Responses lists (from its label). */
async function vignettesListed(page: Page): Promise<string[]> {
  const labels = await page.locator('[data-testid=record-row]').evaluateAll((els) => els.map((el) => el.getAttribute('aria-label') ?? ''));
  return labels.map((l) => l.split(',')[0]!);
}

describe('a chat vignette in the app', () => {
  const s = useUiSession({ context: { viewport: { width: 1280, height: 800 } } });
  let runId: string;

  beforeAll(async () => {
    const manifest = join(s.dir, 'chat.jsonl');
    const lines = [
      { id: 'conversation', messages: CHAT, target: 'B' },
      { id: 'single', prompt: 'What is the first letter?', system: 'Be brief.', target: 'A' },
    ];
    writeFileSync(manifest, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    runId = (await s.scoredRun({ manifestPath: manifest, models: ['mock-strong', 'mock-weak'], epochs: 2, scorers: { scorers: [{ name: 'exact', type: 'match' }] } })).id;
    await s.openApp();
  }, 60_000);

  it('Responses finds its records by the last user turn and shows the conversation turn by turn', async () => {
    await s.page.goto(`${s.ui.origin}/#/responses/${runId}`);
    await s.page.locator('[data-testid=record-row]').first().waitFor(WAIT);
    expect(await s.page.locator('[data-testid=record-row]').count()).toBe(8);
    await s.page.getByPlaceholder('in the response, the prompt or the vignette id').fill('comes second');
    await expect.poll(() => vignettesListed(s.page), WAIT).toEqual(['conversation', 'conversation', 'conversation', 'conversation']);

    await s.page.locator('[data-testid=record-row]').first().click();
    const box = s.page.locator('.side-by-side .prompt-box');
    await box.getByTestId('conversation').waitFor(WAIT);
    expect(await turnsOf(box)).toEqual(CHAT.map((t) => [t.role, t.content]));
    // The turns are text: the markup in one is shown, never made.
    expect(await box.locator('b').count()).toBe(0);
    expect(await box.getByTestId('detail-target').textContent()).toBe('target: B');
    // Every model and epoch of the vignette, answered.
    expect(await s.page.locator('.side-by-side [data-testid=answer-text]').count()).toBe(4);
  });

  it('a single-turn vignette shows its system prompt and prompt, no conversation', async () => {
    await s.page.goto(`${s.ui.origin}/#/responses/${runId}`);
    await s.page.getByPlaceholder('in the response, the prompt or the vignette id').fill('first letter');
    await expect.poll(() => vignettesListed(s.page), WAIT).toEqual(['single', 'single', 'single', 'single']);
    await s.page.locator('[data-testid=record-row]').first().click();
    const box = s.page.locator('.side-by-side .prompt-box');
    await box.locator('.prompt-text').waitFor(WAIT);
    expect(await box.getByTestId('conversation').count()).toBe(0);
    expect(await box.textContent()).toContain('system: Be brief.');
    expect(await box.locator('.prompt-text').textContent()).toContain('What is the first letter?');
  });

  it("the Results cell dialog shows the conversation too", async () => {
    await s.page.goto(`${s.ui.origin}/#/results/${runId}`);
    const cell = s.page.locator('.matrix-button', { hasText: /./ }).and(s.page.locator('[aria-label*="conversation"]')).first();
    await cell.waitFor(WAIT);
    await cell.click();
    const box = s.page.locator('.score-dialog .prompt-box');
    await box.getByTestId('conversation').waitFor(WAIT);
    expect(await turnsOf(box)).toEqual(CHAT.map((t) => [t.role, t.content]));
  });

  it('saw no console error, exception or failed request', () => {
    expect(s.problems).toEqual([]);
  });
});
