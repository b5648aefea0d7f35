/**
 * A test that fails after drawing from a seeded generator: what the seeded-random test runs, to
 * read the seed its failure says.
 * Runs on: Node (tests).
 */
import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: resolve(import.meta.dirname, '../../..'),
    include: ['test/architecture/seeded-random/*.fixture.ts'],
    pool: 'forks',
  },
});
