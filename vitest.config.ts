import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Tests spawn real processes and open real sockets; give slow CI machines room.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
