/**
 * The set-up the renderer's end-to-end tests share, once: a temp folder, real Chromium, the app's
 * server over the folder's `data/`, and one page whose problems are recorded (watchPage); all
 * closed after the file's tests, in the reverse order they were opened. A test file states what
 * differs (its catalog, the viewport, a scheduler left stopped) and seeds runs with `scoredRun`.
 *
 *     const s = useUiSession({ context: { viewport: { width: 1280, height: 860 } } });
 *     it('...', async () => { const run = await s.scoredRun({ ... }); await s.page.goto(s.ui.appUrl); ... });
 *
 * Four set-ups, one life cycle:
 * - `useUiSession`: the HTTP API with the bridge in this process (startInProcessUi), so a test can
 *   also reach the engine;
 * - `useServedUiSession`: the real `panoptes serve --ui` child process (serveUi), for tests of the
 *   app exactly as a person starts it;
 * - `useUiServer`: the temp folder and the in-process server only, for the bridge's own boundary;
 * - `useChromium`: the temp folder and Chromium only, for a file that starts, stops and restarts its
 *   in-process server inside its tests (`startUi`/`stopUi`), or has no server at all.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import type { ControlMethod, MethodInput, MethodResult, Run } from '../../core/service/contract.js';
import type { EngineOptions } from '../../core/service/engine.js';
import { tempDir } from '../helpers/temp.js';
import { bridgeCall, launchChromium, serveUi, startInProcessUi, watchPage, WAIT, type InProcessUi, type InProcessUiOptions, type ServedUi } from './harness.js';

/** The page's browser context, when the file does not say (a 1280 x 900 viewport). */
const DEFAULT_CONTEXT: BrowserContextOptions = { viewport: { width: 1280, height: 900 } };

export interface UiSessionOptions {
  /** The engine's options; a function gets the temp folder, to point at a catalog written there first (or at a server it starts). */
  engine?: Partial<EngineOptions> | ((dir: string) => Partial<EngineOptions> | Promise<Partial<EngineOptions>>);
  /** Start the scheduler (default true). */
  startScheduler?: boolean;
  /** The page's browser context (default: a 1280 x 900 viewport). */
  context?: BrowserContextOptions;
}

export interface ServedUiSessionOptions {
  /** Arguments added to `serve --ui`; a function gets the temp folder, to point at a catalog written there first. */
  args?: (dir: string) => string[];
  /** The page's browser context (default: a 1280 x 900 viewport). */
  context?: BrowserContextOptions;
}

/** What every session with a server has, whichever server it is. */
export interface BrowserSession<U extends { origin: string; appUrl: string; token: string }> {
  /** The temp folder: manifests and catalogs go here, the engine's data in `data/`. */
  readonly dir: string;
  readonly ui: U;
  readonly browser: Browser;
  readonly page: Page;
  /** Everything that went wrong in the page so far (console errors, exceptions, failed requests). */
  readonly problems: string[];
  /** One contract call through the bridge, as the page makes it. */
  call<M extends ControlMethod>(method: M, input?: MethodInput<M> | Record<string, never>): Promise<MethodResult<M>>;
  /** Opens the app's address (its token in the fragment) and waits until the page shows its connection. */
  openApp(): Promise<void>;
}

export interface UiSession extends BrowserSession<InProcessUi> {
  /** Creates a run through the bridge, and runs it and its scoring to the end (the scorekeeper started). */
  scoredRun(input: MethodInput<'createRun'>): Promise<Run>;
}

export type ServedUiSession = BrowserSession<ServedUi>;

export interface UiServer {
  /** The temp folder: manifests and catalogs go here, the engine's data in `data/`. */
  readonly dir: string;
  readonly ui: InProcessUi;
}

export interface ChromiumSession {
  /** The temp folder: manifests and catalogs go here, the engine's data in `data/`. */
  readonly dir: string;
  readonly browser: Browser;
  /** The in-process server `startUi` started last (an error when none is up). */
  readonly ui: InProcessUi;
  /** Starts the in-process server over `data/`, closing the one up first. */
  startUi(opts?: InProcessUiOptions): Promise<InProcessUi>;
  /** Closes the server that is up, if any (the file's end closes it too). */
  stopUi(): Promise<void>;
}

type Close = () => Promise<void> | void;

/**
 * Registers the file's set-up (beforeAll) and tear-down (afterAll): `open` builds the parts and
 * hands each closer to `closing` as soon as its part exists, so a set-up that fails half way still
 * closes what it opened. The getter answers only while the file's tests run.
 */
function useLifetime<T>(name: string, open: (dir: string, closing: (close: Close) => void) => Promise<T>): () => T & { dir: string } {
  let parts: (T & { dir: string }) | undefined;
  let closers: Close[] = [];
  beforeAll(async () => {
    const tmp = tempDir();
    closers.push(() => tmp.cleanup());
    parts = { ...(await open(tmp.dir, (close) => closers.push(close))), dir: tmp.dir };
  });
  afterAll(async () => {
    parts = undefined;
    const last = closers.reverse();
    closers = [];
    const failures: unknown[] = [];
    for (const close of last) {
      try {
        await close();
      } catch (e) {
        failures.push(e);
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, `${name}: ${failures.length} part(s) failed to close`);
  });
  return () => {
    if (parts === undefined) throw new Error(`${name}: the session exists only while its tests run`);
    return parts;
  };
}

/** An object whose `keys` read the parts through `get` each time (so each is an error outside the file's tests). */
function liveView<T extends object, K extends keyof T>(get: () => T, keys: readonly K[]): Pick<T, K> {
  const view = {} as Pick<T, K>;
  for (const key of keys) Object.defineProperty(view, key, { enumerable: true, get: () => get()[key] });
  return view;
}

/** Chromium and one watched page in a context of its own, after `start` brought the server up. */
function useBrowserSession<U extends { origin: string; appUrl: string; token: string; close(): Promise<void> }>(
  name: string,
  start: (dir: string) => Promise<U>,
  context: BrowserContextOptions | undefined,
): { get: () => { dir: string; ui: U; browser: Browser; page: Page; problems: string[] }; session: BrowserSession<U> } {
  const get = useLifetime(name, async (dir, closing) => {
    const ui = await start(dir);
    closing(() => ui.close());
    const browser = await launchChromium();
    closing(() => browser.close());
    const page = await (await browser.newContext(context ?? DEFAULT_CONTEXT)).newPage();
    return { ui, browser, page, problems: watchPage(page) };
  });
  const session: BrowserSession<U> = Object.assign(liveView(get, ['dir', 'ui', 'browser', 'page', 'problems'] as const), {
    call: <M extends ControlMethod>(method: M, input?: MethodInput<M> | Record<string, never>) => bridgeCall(get().ui.origin, get().ui.token, method, input),
    async openApp() {
      const { page, ui } = get();
      await page.goto(ui.appUrl);
      await page.getByTestId('connection').waitFor(WAIT);
    },
  });
  return { get, session };
}

/** The in-process server over `data/` with the session's engine options. */
async function startSessionUi(dir: string, opts: UiSessionOptions): Promise<InProcessUi> {
  const engine = typeof opts.engine === 'function' ? await opts.engine(dir) : opts.engine;
  return startInProcessUi(join(dir, 'data'), { ...(engine ? { engine } : {}), ...(opts.startScheduler === undefined ? {} : { startScheduler: opts.startScheduler }) });
}

/** Registers the file's set-up and tear-down around the in-process server; the session's parts exist while its tests run. */
export function useUiSession(opts: UiSessionOptions = {}): UiSession {
  const { get, session } = useBrowserSession('useUiSession', (dir) => startSessionUi(dir, opts), opts.context);
  return Object.assign(session, {
    async scoredRun(input: MethodInput<'createRun'>): Promise<Run> {
      const { engine } = get().ui;
      const run = await session.call('createRun', input);
      engine.scoring.start();
      await engine.scheduler.runToCompletion(run.id);
      await engine.scoring.finish(run.id);
      return run;
    },
  });
}

/** Registers the file's set-up and tear-down around a real `panoptes serve --ui` child (run `npm run build` first). */
export function useServedUiSession(opts: ServedUiSessionOptions = {}): ServedUiSession {
  return useBrowserSession('useServedUiSession', (dir) => serveUi(join(dir, 'data'), opts.args?.(dir) ?? []), opts.context).session;
}

/**
 * Registers a temp folder and the in-process server, without a browser: for a file that tests the
 * bridge's boundary itself, with raw HTTP and sockets.
 */
export function useUiServer(opts: Omit<UiSessionOptions, 'context'> = {}): UiServer {
  const get = useLifetime('useUiServer', async (dir, closing) => {
    const ui = await startSessionUi(dir, opts);
    closing(() => ui.close());
    return { ui };
  });
  return liveView(get, ['dir', 'ui'] as const);
}

/**
 * Registers a temp folder and Chromium for the file, and an in-process server its tests start,
 * stop and restart themselves (on the same port, with another token): the file opens its own pages.
 */
export function useChromium(): ChromiumSession {
  let ui: InProcessUi | undefined;
  const stopUi = async () => {
    const up = ui;
    ui = undefined;
    await up?.close();
  };
  const get = useLifetime('useChromium', async (_dir, closing) => {
    const browser = await launchChromium();
    closing(() => browser.close());
    closing(stopUi);
    return { browser };
  });
  const current = () => {
    get();
    if (ui === undefined) throw new Error('useChromium: no server is up (startUi first)');
    return ui;
  };
  const view = liveView(get, ['dir', 'browser'] as const);
  // A getter is defined, not copied: Object.assign would read it once, at registration.
  Object.defineProperty(view, 'ui', { enumerable: true, get: current });
  return Object.assign(view as typeof view & Pick<ChromiumSession, 'ui'>, {
    async startUi(opts: InProcessUiOptions = {}) {
      const { dir } = get();
      await stopUi();
      ui = await startInProcessUi(join(dir, 'data'), opts);
      return ui;
    },
    stopUi,
  });
}
