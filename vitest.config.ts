import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests spawn real processes and open real sockets; give slow CI machines room.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Engines opened in tests log at `warn` unless a test asks for more (the telemetry tests do).
    env: { PANOPTES_LOG: 'warn' },
  },
});
