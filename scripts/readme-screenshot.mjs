#!/usr/bin/env node
/**
 * Makes the README's picture: runs a scored demo sweep against `panoptes serve --ui` on a fresh data
 * folder, opens the app in headless Chromium (Debian's /usr/bin/chromium, or PANOPTES_CHROMIUM)
 * and saves the given view at 1280 x 800 to docs/images/app.png. Needs `npm run build` first.
 *   node scripts/readme-screenshot.mjs [results|run]
 * Runs on: Node (a maintainer's tool).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const view = process.argv[2] ?? 'results';
const dataDir = mkdtempSync(join(tmpdir(), 'panoptes-shot-'));
const server = spawn(process.execPath, ['bin/panoptes.cjs', 'serve', '--ui', '--port', '0', '--data-dir', dataDir], {
  env: { ...process.env, PANOPTES_TOKEN: '', PANOPTES_LOG: 'warn' },
  stdio: ['ignore', 'pipe', 'inherit'],
});

try {
  const appUrl = await new Promise((res, rej) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = /the app is at (\S+)/.exec(out);
      if (m) res(m[1]);
    });
    server.on('exit', () => rej(new Error(`serve --ui exited:\n${out}`)));
  });
  const origin = new URL(appUrl).origin;
  const token = decodeURIComponent(new URL(appUrl).hash.replace(/^#token=/, ''));
  const call = async (method, input) => {
    const res = await fetch(`${origin}/bridge/call/${method}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
    const envelope = await res.json();
    if (!envelope.ok) throw new Error(`${method}: ${envelope.error.message}`);
    return envelope.value;
  };
  const run = await call('createRun', {
    manifestPath: resolve('examples/demo-manifest.jsonl'),
    models: ['mock-strong', 'mock-weak', 'mock-fast'],
    epochs: 3,
    scorers: JSON.parse(readFileSync('examples/demo-scorers.json', 'utf8')),
  });
  for (;;) {
    const detail = await call('getRun', { runId: run.id });
    if (['done', 'failed', 'cancelled'].includes(detail.run.status)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const browser = await chromium.launch({
    executablePath: process.env.PANOPTES_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
  await page.goto(appUrl);
  await page.evaluate((hash) => (location.hash = hash), `#/${view === 'run' ? 'runs' : view}/${encodeURIComponent(run.id)}`);
  await page.waitForTimeout(2500);
  await page.screenshot({ path: 'docs/images/app.png' });
  await browser.close();
  console.log(`docs/images/app.png: the ${view} view of ${run.id}`);
} finally {
  server.kill('SIGINT');
  rmSync(dataDir, { recursive: true, force: true });
}
