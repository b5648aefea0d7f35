/**
 * The `app://panoptes/` protocol handler: serves the renderer's files with the CSP, falls back to
 * index.html for in-app routes, and keeps every file outside the renderer folder out of reach.
 * Then the CSP it sends, enforced by real Chromium (/usr/bin/chromium through playwright-core):
 * the handler sits behind a 127.0.0.1 HTTP adapter, so 'self' is that origin, and a page tries
 * inline script, eval, inline styles, a foreign image and a foreign fetch. Last, the real built
 * renderer (dist/renderer) loads under that CSP without a single violation.
 * Runs on: Node (tests).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAppProtocolHandler } from '../../electron/app-protocol.js';
import { CONTENT_SECURITY_POLICY } from '../../electron/security.js';
import { tempDir } from '../helpers/temp.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const BUILT_RENDERER = resolve('dist/renderer');

function fixtureRenderer(dir: string): string {
  const root = join(dir, 'renderer');
  mkdirSync(join(root, 'assets'), { recursive: true });
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>Panoptes</title><div id="root"></div><script type="module" src="./assets/app.js"></script>');
  writeFileSync(join(root, 'assets', 'app.js'), 'document.title = "ran";');
  writeFileSync(join(root, 'assets', 'app.css'), 'body { margin: 0 }');
  writeFileSync(join(dir, 'secret.txt'), 'outside the renderer');
  return root;
}

describe('createAppProtocolHandler', () => {
  const tmp = tempDir();
  const root = fixtureRenderer(tmp.dir);
  const handler = createAppProtocolHandler(root);
  const get = (url: string, method = 'GET') => handler(new Request(url, { method }));
  afterAll(() => tmp.cleanup());

  it('serves index.html with the CSP and safe headers', async () => {
    for (const url of ['app://panoptes/', 'app://panoptes/index.html']) {
      const res = await get(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await res.text()).toContain('<div id="root">');
    }
  });

  it('serves assets with their content type, and answers HEAD without a body', async () => {
    const js = await get('app://panoptes/assets/app.js');
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await js.text()).toBe('document.title = "ran";');
    expect((await get('app://panoptes/assets/app.css')).headers.get('content-type')).toBe('text/css; charset=utf-8');
    const head = await get('app://panoptes/assets/app.js', 'HEAD');
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('answers in-app routes with index.html and missing files with 404', async () => {
    expect(await (await get('app://panoptes/runs/r123')).text()).toContain('<div id="root">');
    const missing = await get('app://panoptes/assets/missing.js');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
  });

  it.each([
    'app://panoptes/../secret.txt',
    'app://panoptes/%2e%2e/secret.txt',
    'app://panoptes/..%2fsecret.txt',
    'app://panoptes/assets/..%2f..%2fsecret.txt',
    'app://panoptes/..%5csecret.txt',
    'app://panoptes/%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  ])('keeps files outside the renderer out of reach: %s', async (url) => {
    const res = await get(url);
    expect(await res.text()).not.toContain('outside the renderer');
    expect([200, 404]).toContain(res.status);
    if (res.status === 200) expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('refuses other hosts, other methods and malformed paths', async () => {
    expect((await get('app://evil/index.html')).status).toBe(404);
    expect((await get('app://panoptes/index.html', 'POST')).status).toBe(405);
    expect((await get('app://panoptes/%E0%A4%A')).status).toBe(400);
    expect((await get('app://panoptes/a%00.js')).status).toBe(400);
  });

  it('says the renderer is not built when index.html is missing', async () => {
    const empty = tempDir();
    const res = await createAppProtocolHandler(empty.dir)(new Request('app://panoptes/'));
    expect(res.status).toBe(404);
    expect(await res.text()).toMatch(/not built/);
    empty.cleanup();
  });
});

/** The handler behind HTTP on 127.0.0.1, so Chromium can load what `app://panoptes/` would serve. */
async function serveOverHttp(rootDir: string): Promise<{ server: Server; url: string }> {
  const handler = createAppProtocolHandler(rootDir);
  const server = createServer((req, res) => {
    void handler(new Request(`app://panoptes${req.url ?? '/'}`, { method: req.method ?? 'GET' })).then(async (response) => {
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const VIOLATION_PROBE = `
  window.__violations = [];
  document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.effectiveDirective + ' ' + e.blockedURI));
`;

describe.skipIf(!existsSync(CHROMIUM))(`the CSP in Chromium (${CHROMIUM}${existsSync(CHROMIUM) ? '' : ': skipped, not installed (apt-get install chromium)'})`, () => {
  let browser: Browser;
  const tmp = tempDir();
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    tmp.cleanup();
  });

  it("runs the app's own scripts and blocks inline script, eval, inline styles and foreign requests", async () => {
    const root = join(tmp.dir, 'probe');
    mkdirSync(root);
    writeFileSync(
      join(root, 'index.html'),
      `<!doctype html><html><head>
        <script src="./app.js"></script>
        <script>window.inlineRan = true;</script>
        <style>body { color: rgb(255, 0, 0); }</style>
        </head><body><p id="p">hello</p><img src="https://example.com/pixel.png">
        <iframe src="https://example.com/"></iframe><object data="https://example.com/x.swf"></object></body></html>`,
    );
    writeFileSync(
      join(root, 'app.js'),
      `window.selfRan = true;
       try { eval('1 + 1'); window.evalRan = true; } catch { window.evalRan = false; }
       try { new Function('return 1')(); window.functionRan = true; } catch { window.functionRan = false; }
       window.fetchResult = fetch('http://127.0.0.2:9/steal').then(() => 'reached', () => 'blocked');
       window.sameOrigin = fetch('./app.js').then((r) => r.status, () => 'blocked');`,
    );
    const { server, url } = await serveOverHttp(root);
    const page = await browser.newPage();
    try {
      await page.addInitScript(VIOLATION_PROBE);
      await page.goto(`${url}/index.html`);
      await page.waitForFunction('window.selfRan === true');
      const outcome = await page.evaluate(`(async () => ({
        inlineRan: window.inlineRan ?? false,
        evalRan: window.evalRan,
        functionRan: window.functionRan,
        fetchResult: await window.fetchResult,
        sameOrigin: await window.sameOrigin,
        color: getComputedStyle(document.getElementById('p')).color,
      }))()`);
      expect(outcome).toEqual({
        inlineRan: false,
        evalRan: false,
        functionRan: false,
        fetchResult: 'blocked',
        sameOrigin: 200,
        color: 'rgb(0, 0, 0)',
      });
      const violations = (await page.evaluate<string[]>('window.__violations')).join('\n');
      for (const directive of ['script-src-elem', 'script-src', 'style-src-elem', 'img-src', 'connect-src', 'frame-src', 'object-src']) {
        expect(violations, directive).toContain(directive);
      }
    } finally {
      await page.close();
      server.close();
    }
  });

  it.skipIf(!existsSync(join(BUILT_RENDERER, 'index.html')))(
    `loads the built renderer (${BUILT_RENDERER}${existsSync(join(BUILT_RENDERER, 'index.html')) ? '' : ': skipped, not built (npm run build)'}) with no CSP violation`,
    async () => {
      const { server, url } = await serveOverHttp(BUILT_RENDERER);
      const page = await browser.newPage();
      const consoleErrors: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) consoleErrors.push(m.text());
      });
      try {
        await page.addInitScript(VIOLATION_PROBE);
        await page.goto(`${url}/index.html`);
        await page.waitForFunction("(document.getElementById('root')?.childElementCount ?? 0) > 0", undefined, { timeout: 15_000 });
        await page.waitForTimeout(500);
        const violations = await page.evaluate<string[]>('window.__violations');
        expect(violations).toEqual([]);
        expect(consoleErrors).toEqual([]);
      } finally {
        await page.close();
        server.close();
      }
    },
  );
});
