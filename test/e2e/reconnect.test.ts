/**
 * The app when its server goes away and comes back: the page says it is reconnecting, reconnects
 * by itself (no reload), and fetches again what it may have missed — here a run created while it
 * was away. The server closes cleanly with a tab still connected.
 * Runs on: Node (tests), driving Chromium.
 */
import { describe, expect, it } from 'vitest';
import { writeManifest } from '../helpers/temp.js';
import { shotPath, WAIT, watchPage } from './harness.js';
import { useChromium } from './ui-session.js';

describe('the app across a server restart', () => {
  // The test closes its server with the tab connected and starts it again on the same port.
  const s = useChromium();

  it('shows it is reconnecting, comes back by itself, and fetches what it missed', async () => {
    const manifest = writeManifest(s.dir, 3);
    const { port } = await s.startUi({ startScheduler: false });
    const page = await s.browser.newPage();
    const problems = watchPage(page);
    await page.goto(s.ui.appUrl);
    await page.getByTestId('try-example').waitFor();
    await expect.poll(() => page.getByTestId('connection').textContent(), WAIT).toBe('live');

    await s.stopUi(); // with the tab connected
    await expect.poll(() => page.getByTestId('connection').textContent(), WAIT).toBe('reconnecting…');
    await page.getByRole('status').filter({ hasText: 'reconnecting' }).waitFor();
    await page.screenshot({ path: shotPath('reconnecting') });

    await s.startUi({ startScheduler: false, port });
    const run = await s.ui.engine.service.createRun({ manifestPath: manifest, models: ['mock-fast'], epochs: 1 });
    await expect.poll(() => page.getByTestId('connection').textContent(), WAIT).toBe('live');
    await expect.poll(() => page.locator(`[data-testid=run-row][data-run-id="${run.id}"]`).count(), WAIT).toBe(1);
    expect(await page.getByRole('status').count()).toBe(0);
    // While the server was closing or down, fetches and the socket failed (a request caught by the
    // close is reset or answered 503, Fastify's answer while it closes); nothing else went wrong.
    const closing = /ERR_CONNECTION_REFUSED|ERR_CONNECTION_RESET|WebSocket connection|status of 503 \(Service Unavailable\)/;
    expect(problems.filter((p) => !closing.test(p))).toEqual([]);
  });
});
