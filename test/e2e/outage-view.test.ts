/**
 * The Run view during an outage, in real Chromium against a real engine whose only host is a local
 * HTTP server process: while the server is down the view says which host the run waits for; once
 * it is back the wait goes, and the vignette given up on is listed with its attempts and last
 * error, as `getRun` reports it. No console error or failed request is allowed.
 * Runs on: Node (tests), driving Chromium.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { startOpenAIServer, type ServerProcess } from '../outages/openai-server.js';
import { launchChromium, shotPath, startInProcessUi, watchPage, type InProcessUi } from './harness.js';

const WAIT = { timeout: 30_000, interval: 50 };

describe('the Run view during an outage', () => {
  const tmp = tempDir();
  let ui: InProcessUi;
  let server: ServerProcess | undefined;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let port: number;

  beforeAll(async () => {
    const down = await startOpenAIServer({ delayMs: 5 });
    port = down.port;
    await down.kill();
    const catalog = join(tmp.dir, 'down.json');
    writeFileSync(
      catalog,
      JSON.stringify({
        providers: { srv0: { kind: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, trainsOnData: false, timeoutMs: 5000 } },
        models: { m: { hosts: [{ provider: 'srv0', model: 'm', contextWindow: 8192 }] } },
      }),
    );
    ui = await startInProcessUi(join(tmp.dir, 'data'), { engine: { catalogPaths: [catalog] } });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
    problems = watchPage(page);
  });
  afterAll(async () => {
    await browser?.close();
    await ui?.close();
    await server?.kill();
    tmp.cleanup();
  });

  it('shows the host it waits for, then the vignette it gave up on', async () => {
    const manifest = join(tmp.dir, 'm.jsonl');
    writeFileSync(manifest, ['question 0', 'question 1', 'ALWAYS500 please'].map((prompt, i) => JSON.stringify({ id: `v${i}`, prompt })).join('\n') + '\n');
    const run = await ui.engine.service.createRun({ manifestPath: manifest, models: ['m'], epochs: 1, skipPromptCache: true });
    await page.goto(ui.appUrl);
    await page.goto(`${ui.origin}/#/runs/${run.id}`);

    await page.getByTestId('run-waiting').waitFor(WAIT);
    expect(await page.getByTestId('run-waiting').textContent()).toMatch(/^Waiting for host srv0\/m, down since /);
    await page.screenshot({ path: shotPath('outage-waiting') });

    server = await startOpenAIServer({ port, delayMs: 5 });
    await expect.poll(async () => (await ui.engine.service.getRun({ runId: run.id })).run.status, WAIT).toBe('failed');
    await page.getByTestId('given-up').waitFor(WAIT);
    expect(await page.getByTestId('run-waiting').count()).toBe(0);
    const cells = await page.locator('[data-testid=given-up] tbody tr td').allTextContents();
    const [failure] = (await ui.engine.service.getRun({ runId: run.id })).failures;
    expect(cells).toEqual(['v2', 'm · epoch 1', '6', failure!.message]);
    expect(failure!.message).toMatch(/500/);
    await page.screenshot({ path: shotPath('outage-given-up'), fullPage: true });
    expect(problems).toEqual([]);
  }, 60_000);
});
