/**
 * A watchdog over the suite, in vitest's own process: a test whose worker is blocked (native code
 * or a loop that never yields) stops its own timeout from firing, and vitest would wait for it
 * for ever. This reporter knows when each test file was last heard from and how long what runs in
 * it may take (a test's timeout, or the hook timeout between tests); when a file has gone past
 * that by `GRACE_MS` it names the file and the test (from the note watchdog-setup.ts wrote in the
 * worker before the test began) and ends the run as failed.
 * Runs on: Node (tests).
 */
import { rmSync } from 'node:fs';
import type { Reporter, TestCase, TestModule, Vitest } from 'vitest/node';
import { runningTests, watchdogDir } from './watchdog-notes.js';

/** Past its own timeout, a test gets this much longer before it counts as blocking its worker. */
const GRACE_MS = Number(process.env.PANOPTES_TEST_WATCHDOG_GRACE_MS ?? 60_000);
const CHECK_EVERY_MS = 2_000;

interface Watch {
  /** When the module must next be heard from. */
  deadline: number;
  /** The tests running in it now. */
  running: Set<TestCase>;
}

export default class WatchdogReporter implements Reporter {
  private testTimeout = 5_000;
  private hookTimeout = 10_000;
  private readonly modules = new Map<TestModule, Watch>();
  private timer: NodeJS.Timeout | undefined;

  onInit(vitest: Vitest): void {
    this.testTimeout = vitest.config.testTimeout;
    this.hookTimeout = vitest.config.hookTimeout;
    this.timer = setInterval(() => this.check(), CHECK_EVERY_MS);
    this.timer.unref();
  }

  onTestModuleStart(module: TestModule): void {
    this.modules.set(module, { deadline: 0, running: new Set() });
    this.heard(module);
  }

  onTestCaseReady(test: TestCase): void {
    this.modules.get(test.module)?.running.add(test);
    this.heard(test.module);
  }

  onTestCaseResult(test: TestCase): void {
    this.modules.get(test.module)?.running.delete(test);
    this.heard(test.module);
  }

  onTestModuleEnd(module: TestModule): void {
    this.modules.delete(module);
  }

  onTestRunEnd(): void {
    clearInterval(this.timer);
    rmSync(watchdogDir(process.pid), { recursive: true, force: true });
  }

  /** The module spoke: it may stay quiet for as long as what runs in it may take, plus the grace. */
  private heard(module: TestModule): void {
    const watch = this.modules.get(module);
    if (!watch) return;
    let allowed = this.hookTimeout;
    for (const t of watch.running) allowed = Math.max(allowed, t.options.timeout ?? this.testTimeout);
    watch.deadline = Date.now() + allowed + GRACE_MS;
  }

  private check(): void {
    const now = Date.now();
    for (const [module, watch] of this.modules) {
      if (now < watch.deadline) continue;
      const noted = runningTests(watchdogDir(process.pid)).filter((n) => n.file === module.moduleId && n.test !== null);
      const tests = noted.length > 0 ? noted.map((n) => n.test) : [...watch.running].map((t) => t.fullName);
      const what = tests.length > 0 ? tests.map((t) => `"${t}"`).join(', ') : 'a hook (no test running)';
      process.stderr.write(
        `\nwatchdog: ${module.relativeModuleId}: ${what} went ${Math.round(GRACE_MS / 1000)} s past its timeout; ` +
          'something blocks its worker (native code or a loop that never yields). Ending the run as failed.\n',
      );
      rmSync(watchdogDir(process.pid), { recursive: true, force: true });
      process.exit(1);
    }
  }
}
