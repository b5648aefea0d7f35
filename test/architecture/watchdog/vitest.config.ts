/**
 * The suite's watchdog on one fixture that blocks its worker: what the watchdog's test runs.
 * Runs on: Node (tests).
 */
import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

const root = resolve(import.meta.dirname, '../../..');

export default defineConfig({
  test: {
    root,
    include: ['test/architecture/watchdog/*.fixture.ts'],
    pool: 'forks',
    hookTimeout: 1_000,
    reporters: ['default', resolve(root, 'test/helpers/watchdog-reporter.ts')],
    setupFiles: [resolve(root, 'test/helpers/watchdog-setup.ts')],
  },
});
