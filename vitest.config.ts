import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests spawn real processes and open real sockets; give slow CI machines room.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // A test that blocks its worker cannot time itself out: the watchdog names it and fails the run.
    // Every run also writes its JSON report to test-results/vitest.json (for scripts/test-durations.mjs).
    reporters: ['default', './test/helpers/watchdog-reporter.ts', './test/helpers/json-file-reporter.ts'],
    setupFiles: ['./test/helpers/watchdog-setup.ts'],
    // Engines opened in tests log at `warn` unless a test asks for more (the telemetry tests do).
    env: { PANOPTES_LOG: 'warn' },
  },
});
