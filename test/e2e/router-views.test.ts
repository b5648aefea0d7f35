/**
 * The router's face in a browser: real Chromium against the real `panoptes serve --ui`. The Models
 * view lists the roster with frontier judgements and host states and says frontier OK; its probe
 * button finds a refused key, the host turns blacklisted and frontier OK turns false. The Workers
 * view turns the listener on, shows the exact command, a real `panoptes worker` running that
 * command appears live, and stopping lets it go; a bad port is refused next to the field. No
 * console error, exception or failed request anywhere.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnWorker, stopWorkers, type WorkerProcess } from '../remote/harness.js';
import { shotPath, WAIT } from './harness.js';
import { useServedUiSession } from './ui-session.js';

describe('the Models and Workers views', () => {
  let catalogPath: string;
  const s = useServedUiSession({
    args: (dir) => {
      catalogPath = join(dir, 'panel.json');
      const host = (model: string, options: Record<string, unknown> = {}) => ({ provider: model, model, contextWindow: 64000, options });
      writeFileSync(
        catalogPath,
        JSON.stringify({
          providers: { north: { kind: 'mock', trainsOnData: false }, south: { kind: 'mock', trainsOnData: false } },
          models: {
            north: { label: 'North star', frontier: true, frontierAsOf: '2026-11', hosts: [host('north', { latencyMs: 1 })] },
            south: { frontier: true, frontierAsOf: '2026-10', hosts: [host('south', { errorRate: 1, errorKind: 'auth' })] },
          },
        }),
      );
      return ['--catalog', catalogPath];
    },
    context: { viewport: { width: 1400, height: 900 } },
  });
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    await s.page.goto(s.ui.appUrl);
  });

  // Registered after the session's, so it runs before the session closes.
  afterAll(async () => {
    await stopWorkers(workers);
  });

  const hostState = (model: string) => s.page.locator(`[data-model=${model}] [data-testid=host-state]`).first().textContent();

  it('lists the roster, and a probe turns frontier OK false when a key is refused', async () => {
    await s.page.getByRole('link', { name: 'Models' }).click();
    await s.page.getByTestId('roster-table').waitFor();
    await expect.poll(() => s.page.getByTestId('frontier-ok').getAttribute('data-ok'), WAIT).toBe('true');
    expect(await s.page.locator('[data-model=north] [data-testid=frontier]').textContent()).toBe('frontier (2026-11)');
    expect(await s.page.locator('[data-model=north]').textContent()).toContain('North star');
    expect(await hostState('north')).toBe('ready');
    // The hosted defaults are on the roster too, waiting for their keys.
    expect(await s.page.locator('[data-model="gpt-5.4"] [data-testid=host-state]').first().textContent()).toBe('no key');

    await s.page.getByTestId('probe-all').click();
    await expect.poll(() => s.page.getByTestId('probe-summary').textContent(), WAIT).toMatch(/answered/);
    await expect.poll(() => hostState('south'), WAIT).toBe('blacklisted');
    expect(await hostState('north')).toBe('ready');
    expect(await s.page.locator('[data-model=south] [data-testid=last-probe]').textContent()).toContain('auth');
    expect(await s.page.getByTestId('frontier-ok').getAttribute('data-ok')).toBe('false');
    expect(await s.page.getByTestId('frontier-ok').textContent()).toContain('Frontier models with a privacy-safe host ready: north.');
    await s.page.screenshot({ path: shotPath('router-models'), fullPage: true });
  });

  it('turns the listener on, shows the command, and a worker running it appears live', async () => {
    await s.page.getByRole('link', { name: 'Workers' }).click();
    await s.page.getByTestId('listener-card').waitFor();
    expect(await s.page.getByTestId('listener-state').textContent()).toBe('not listening');

    await s.page.getByTestId('listener-port').fill('99999');
    await s.page.getByTestId('listener-start').click();
    await expect.poll(() => s.page.locator('#field-listener-port-note').textContent(), WAIT).toMatch(/port/);
    expect(await s.page.getByTestId('listener-state').textContent()).toBe('not listening');

    await s.page.getByTestId('listener-port').fill('0');
    await s.page.getByTestId('listener-start').click();
    const command = s.page.getByTestId('worker-command');
    await command.waitFor(WAIT);
    const m = /^panoptes worker --connect 127\.0\.0\.1:(\d+) --token (\S+)$/.exec((await command.textContent()) ?? '');
    expect(m).not.toBeNull();
    expect(await s.page.getByTestId('token-kept').textContent()).toContain('worker-token');
    expect(await s.page.getByTestId('listener-state').textContent()).toBe(`listening on 127.0.0.1:${m![1]}`);

    workers.push(spawnWorker({ id: 'w-from-the-app', catalogPath, port: Number(m![1]), token: m![2]! }));
    const row = s.page.locator('[data-testid=workers-table] tr', { hasText: 'w-from-the-app' });
    await row.waitFor(WAIT);
    expect(await row.textContent()).toContain('alive');
    await s.page.screenshot({ path: shotPath('router-workers'), fullPage: true });

    await s.page.getByTestId('listener-stop').click();
    await expect.poll(() => s.page.getByTestId('listener-state').textContent(), WAIT).toBe('not listening');
    await expect.poll(() => row.count(), WAIT).toBe(0);
    // The one refusal provoked on purpose (the bad port) is the only thing the console saw.
    expect(s.problems).toEqual(['console: Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  });
});
