// ESLint: only type-aware rules that catch real bugs in an engine built on promises and
// exhaustive unions. Style is left to the compiler's strict settings and to review.
// Runs on: Node (tooling).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'release/**', '.electron-native/**', 'test-results/**', '**/*.js', '**/*.mjs', '**/*.cjs', 'electron/preload.cts'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {
        projectService: { allowDefaultProject: ['vite.config.ts', 'vitest.config.ts', 'rolldown.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits or catches loses its error (an unhandled rejection ends the process).
      '@typescript-eslint/no-floating-promises': 'error',
      // An async callback where a void one is expected (an event handler, a timer) drops its rejection.
      '@typescript-eslint/no-misused-promises': 'error',
      // A switch over a union must handle every member, so a new status or event type cannot slip through.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
);
