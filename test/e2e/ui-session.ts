/**
 * The set-up most renderer end-to-end tests share, once: a temp folder, the HTTP API with the
 * bridge in this process over its `data/` (startInProcessUi), real Chromium, and one page whose
 * problems are recorded (watchPage); all closed after the file's tests. A test file states what
 * differs (its catalog, the viewport, a scheduler left stopped) and seeds runs with `scoredRun`.
 *
 *     const s = useUiSession({ context: { viewport: { width: 1280, height: 860 } } });
 *     it('...', async () => { const run = await s.scoredRun({ ... }); await s.page.goto(s.ui.appUrl); ... });
 *
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import type { ControlMethod, MethodInput, MethodResult, Run } from '../../core/service/contract.js';
import type { EngineOptions } from '../../core/service/engine.js';
import { tempDir } from '../helpers/temp.js';
import { bridgeCall, launchChromium, startInProcessUi, TOKEN, watchPage, type InProcessUi } from './harness.js';

export interface UiSessionOptions {
  /** The engine's options; a function gets the temp folder, to point at a catalog written there first. */
  engine?: Partial<EngineOptions> | ((dir: string) => Partial<EngineOptions>);
  /** Start the scheduler (default true). */
  startScheduler?: boolean;
  /** The page's browser context (default: a 1280 x 900 viewport). */
  context?: BrowserContextOptions;
}

export interface UiSession {
  /** The temp folder: manifests and catalogs go here, the engine's data in `data/`. */
  readonly dir: string;
  readonly ui: InProcessUi;
  readonly browser: Browser;
  readonly page: Page;
  /** Everything that went wrong in the page so far (console errors, exceptions, failed requests). */
  readonly problems: string[];
  /** One contract call through the bridge, as the page makes it. */
  call<M extends ControlMethod>(method: M, input?: MethodInput<M> | Record<string, never>): Promise<MethodResult<M>>;
  /** Creates a run through the bridge, and runs it and its scoring to the end (the scorekeeper started). */
  scoredRun(input: MethodInput<'createRun'>): Promise<Run>;
}

/** Registers the file's set-up (beforeAll) and tear-down (afterAll); the session's parts exist while its tests run. */
export function useUiSession(opts: UiSessionOptions = {}): UiSession {
  let parts: { tmp: ReturnType<typeof tempDir>; ui: InProcessUi; browser: Browser; page: Page; problems: string[] } | undefined;
  let tmp: ReturnType<typeof tempDir> | undefined;
  let ui: InProcessUi | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    tmp = tempDir();
    const engine = typeof opts.engine === 'function' ? opts.engine(tmp.dir) : opts.engine;
    ui = await startInProcessUi(join(tmp.dir, 'data'), { ...(engine ? { engine } : {}), ...(opts.startScheduler === undefined ? {} : { startScheduler: opts.startScheduler }) });
    browser = await launchChromium();
    const page = await (await browser.newContext(opts.context ?? { viewport: { width: 1280, height: 900 } })).newPage();
    parts = { tmp, ui, browser, page, problems: watchPage(page) };
  });
  afterAll(async () => {
    await browser?.close();
    await ui?.close();
    tmp?.cleanup();
    parts = undefined;
  });
  const get = () => {
    if (parts === undefined) throw new Error('useUiSession: the session exists only while its tests run');
    return parts;
  };
  const call = <M extends ControlMethod>(method: M, input?: MethodInput<M> | Record<string, never>) => bridgeCall(get().ui.origin, TOKEN, method, input);
  return {
    get dir() {
      return get().tmp.dir;
    },
    get ui() {
      return get().ui;
    },
    get browser() {
      return get().browser;
    },
    get page() {
      return get().page;
    },
    get problems() {
      return get().problems;
    },
    call,
    async scoredRun(input) {
      const { engine } = get().ui;
      const run = await call('createRun', input);
      engine.scoring.start();
      await engine.scheduler.runToCompletion(run.id);
      await engine.scoring.finish(run.id);
      return run;
    },
  };
}
