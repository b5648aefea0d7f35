/**
 * The Run view during an outage, in real Chromium against a real engine whose only host is a local
 * HTTP server process: while the server is down the view says which host the run waits for; once
 * it is back the wait goes, and the vignette given up on is listed with its attempts and last
 * error, as `getRun` reports it. No console error or failed request is allowed.
 * Runs on: Node (tests), driving Chromium.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startOpenAIServer, type ServerProcess } from '../outages/openai-server.js';
import { shotPath, WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

describe('the Run view during an outage', () => {
  let server: ServerProcess | undefined;
  let port: number;
  // Registered first, so it runs after the session has closed.
  afterAll(async () => {
    await server?.kill();
  });
  const s = useUiSession({
    engine: async (dir) => {
      const down = await startOpenAIServer({ delayMs: 5 });
      port = down.port;
      await down.kill();
      const catalog = join(dir, 'down.json');
      writeFileSync(
        catalog,
        JSON.stringify({
          providers: { srv0: { kind: 'openai', baseUrl: `http://127.0.0.1:${port}/v1`, trainsOnData: false, timeoutMs: 5000 } },
          models: { m: { hosts: [{ provider: 'srv0', model: 'm', contextWindow: 8192 }] } },
        }),
      );
      return { catalogPaths: [catalog] };
    },
    context: { viewport: { width: 1280, height: 860 } },
  });

  it('shows the host it waits for, then the vignette it gave up on', async () => {
    const manifest = join(s.dir, 'm.jsonl');
    writeFileSync(manifest, ['question 0', 'question 1', 'ALWAYS500 please'].map((prompt, i) => JSON.stringify({ id: `v${i}`, prompt })).join('\n') + '\n');
    const run = await s.ui.engine.service.createRun({ manifestPath: manifest, models: ['m'], epochs: 1, skipPromptCache: true });
    await s.page.goto(s.ui.appUrl);
    await s.page.goto(`${s.ui.origin}/#/runs/${run.id}`);

    await s.page.getByTestId('run-waiting').waitFor(WAIT);
    expect(await s.page.getByTestId('run-waiting').textContent()).toMatch(/^Waiting for host srv0\/m, down since /);
    await s.page.screenshot({ path: shotPath('outage-waiting') });

    server = await startOpenAIServer({ port, delayMs: 5 });
    await expect.poll(async () => (await s.ui.engine.service.getRun({ runId: run.id })).run.status, WAIT).toBe('failed');
    await s.page.getByTestId('given-up').waitFor(WAIT);
    expect(await s.page.getByTestId('run-waiting').count()).toBe(0);
    const cells = await s.page.locator('[data-testid=given-up] tbody tr td').allTextContents();
    const [failure] = (await s.ui.engine.service.getRun({ runId: run.id })).failures;
    expect(cells).toEqual(['v2', 'm · epoch 1', '6', failure!.message]);
    expect(failure!.message).toMatch(/500/);
    await s.page.screenshot({ path: shotPath('outage-given-up'), fullPage: true });
    expect(s.problems).toEqual([]);
  }, 60_000);
});
