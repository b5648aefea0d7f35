/**
 * The app when its server goes away and comes back: the page says it is reconnecting, reconnects
 * by itself (no reload), and fetches again what it may have missed — here a run created while it
 * was away. The server closes cleanly with a tab still connected.
 * Runs on: Node (tests), driving Chromium.
 */
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir, writeManifest } from '../helpers/temp.js';
import { launchChromium, shotPath, startInProcessUi, watchPage, type InProcessUi } from './harness.js';

const WAIT = { timeout: 30_000, interval: 50 };

describe('the app across a server restart', () => {
  let tmp: ReturnType<typeof tempDir>;
  let browser: Browser;
  let ui: InProcessUi | undefined;

  beforeAll(async () => {
    tmp = tempDir();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await ui?.close();
    await browser?.close();
    tmp?.cleanup();
  });

  it('shows it is reconnecting, comes back by itself, and fetches what it missed', async () => {
    const dataDir = join(tmp.dir, 'data');
    const manifest = writeManifest(tmp.dir, 3);
    ui = await startInProcessUi(dataDir, { startScheduler: false });
    const port = ui.port;
    const page = await browser.newPage();
    const problems = watchPage(page);
    await page.goto(ui.appUrl);
    await page.getByTestId('try-example').waitFor();
    await expect.poll(() => page.getByTestId('connection').textContent(), WAIT).toBe('live');

    await ui.close(); // with the tab connected
    ui = undefined;
    await expect.poll(() => page.getByTestId('connection').textContent(), WAIT).toBe('reconnecting…');
    await page.getByRole('status').filter({ hasText: 'reconnecting' }).waitFor();
    await page.screenshot({ path: shotPath('reconnecting') });

    ui = await startInProcessUi(dataDir, { startScheduler: false, port });
    const run = await ui.engine.service.createRun({ manifestPath: manifest, models: ['mock-fast'], epochs: 1 });
    await expect.poll(() => page.getByTestId('connection').textContent(), WAIT).toBe('live');
    await expect.poll(() => page.locator(`[data-testid=run-row][data-run-id="${run.id}"]`).count(), WAIT).toBe(1);
    expect(await page.getByRole('status').count()).toBe(0);
    // While the server was closing or down, fetches and the socket failed (a request caught by the
    // close is reset or answered 503, Fastify's answer while it closes); nothing else went wrong.
    const closing = /ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|WebSocket connection|status of 503 \(Service Unavailable\)/;
    expect(problems.filter((p) => !closing.test(p))).toEqual([]);
  });
});
