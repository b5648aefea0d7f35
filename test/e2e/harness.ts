/**
 * What the renderer's end-to-end tests share: real Chromium (Debian's /usr/bin/chromium driven by
 * playwright-core), the real `panoptes serve --ui` as a child process over a temp data dir, the
 * bridge in-process for tests that need to reach around it, and a page that records every console
 * error, failed request and uncaught exception (a CSP violation shows up as a console error).
 * Runs on: Node (tests).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createHttpServer } from '../../core/http/api.js';
import { browserBridge, bridgeSources } from '../../core/http/bridge.js';
import { ManifestRoots } from '../../core/http/manifest-roots.js';
import type { ControlMethod, Envelope, MethodInput, MethodResult } from '../../core/service/contract.js';
import { openEngine, type Engine, type EngineOptions } from '../../core/service/engine.js';
import { initTelemetry } from '../../core/telemetry.js';
import { startCli } from '../helpers/cli.js';

export const CHROMIUM_PATH = process.env.PANOPTES_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const SHOTS_DIR = resolve('test-results', 'e2e');
export const TOKEN = 'e2e-token-0123456789abcdef';
/** How long and how often the tests wait for the page: bounded, never a timed assertion. */
export const WAIT = { timeout: 30_000, interval: 50 };

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: apt-get install -y chromium (or set PANOPTES_CHROMIUM)`);
  }
  if (!existsSync(resolve('dist/renderer/index.html'))) throw new Error('the renderer is not built: npm run build');
  mkdirSync(SHOTS_DIR, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

export function shotPath(name: string): string {
  return join(SHOTS_DIR, `${name}.png`);
}

/**
 * Where a picture the docs show is written: docs/images/NAME.png when PANOPTES_DOC_IMAGES=1 (to
 * refresh the docs' pictures on purpose), else beside the other screenshots, so a test run never
 * changes a tracked file.
 */
export function docImagePath(name: string): string {
  return process.env.PANOPTES_DOC_IMAGES === '1' ? resolve('docs', 'images', `${name}.png`) : shotPath(name);
}

/** Everything that went wrong in a page: console errors (CSP violations among them), exceptions, failed requests. */
export function watchPage(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`exception: ${e.message}`));
  page.on('requestfailed', (r) => {
    // A download that the test saves itself is reported as aborted; that is not a failure.
    if (r.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  return problems;
}

export interface ServedUi {
  /** The address `serve --ui` printed, with the token in the fragment. */
  appUrl: string;
  origin: string;
  port: number;
  token: string;
  /** Stops the child (SIGTERM) and waits for it to exit. */
  close(): Promise<void>;
}

/** Starts `panoptes serve --ui --port 0` and waits for the app's address. */
export async function serveUi(dataDir: string, extraArgs: string[] = []): Promise<ServedUi> {
  // The tests keep their manifests beside the data folder.
  const cli = startCli(['serve', '--ui', '--port', '0', '--data-dir', dataDir, '--manifest-root', dirname(dataDir), ...extraArgs], { PANOPTES_TOKEN: '' });
  let stdout = '';
  cli.child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const deadline = Date.now() + 20_000;
  for (;;) {
    const m = /the app is at (http:\/\/127\.0\.0\.1:(\d+))\/#token=(\S+)/.exec(stdout);
    if (m) {
      return {
        appUrl: `${m[1]}/#token=${m[3]}`,
        origin: m[1]!,
        port: Number(m[2]),
        token: decodeURIComponent(m[3]!),
        async close() {
          if (cli.child.exitCode === null) cli.child.kill('SIGTERM');
          await cli.done;
        },
      };
    }
    if (Date.now() > deadline || cli.child.exitCode !== null) throw new Error(`serve --ui did not start:\n${stdout}\n${cli.stderr()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface InProcessUi {
  engine: Engine;
  app: FastifyInstance;
  port: number;
  origin: string;
  appUrl: string;
  token: string;
  close(): Promise<void>;
}

export interface InProcessUiOptions {
  engine?: Partial<EngineOptions>;
  /** Start the scheduler (default true). */
  startScheduler?: boolean;
  /** The port to listen on (default: any free one). */
  port?: number;
  /** The bridge's token (default TOKEN). */
  token?: string;
}

/** The HTTP API with the bridge, in this process (so a test can also reach the engine directly). */
export async function startInProcessUi(dataDir: string, opts: InProcessUiOptions = {}): Promise<InProcessUi> {
  const token = opts.token ?? TOKEN;
  initTelemetry({ defaultLevel: 'warn' }); // refusals the tests provoke are logged as warnings; requests are not
  const engine = openEngine({ dataDir, ...opts.engine });
  const app = createHttpServer(engine, { token });
  // The tests keep their manifests beside the data folder.
  const manifestRoots = ManifestRoots.of(dataDir, [dirname(dataDir)]);
  await app.register(browserBridge, { ...bridgeSources(engine), token, manifestRoots });
  await app.listen({ host: '127.0.0.1', port: opts.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  if (opts.startScheduler ?? true) engine.scheduler.start();
  const origin = `http://127.0.0.1:${port}`;
  return {
    engine,
    app,
    port,
    origin,
    appUrl: `${origin}/#token=${encodeURIComponent(token)}`,
    token,
    async close() {
      await app.close();
      await engine.close();
    },
  };
}

/** One contract call through the bridge, as the page makes it. */
export async function bridgeCall<M extends ControlMethod>(
  origin: string,
  token: string,
  method: M,
  input: MethodInput<M> | Record<string, never> = {},
): Promise<MethodResult<M>> {
  const res = await fetch(`${origin}/bridge/call/${method}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(input ?? {}),
  });
  const envelope = (await res.json()) as Envelope<MethodResult<M>>;
  if (!envelope.ok) throw new Error(`${method}: ${envelope.error.message}`);
  return envelope.value;
}
