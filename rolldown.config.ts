/**
 * Bundles the `panoptes` command line (core/cli/main.ts) into dist/cli/, which bin/panoptes.js
 * loads. Node loads an ES module per file, resolving, reading and compiling each one, and the
 * compiled dist/core/ holds a file per source module: a bundle of a few files is what lets the
 * command start in well under a second's tenth over Node's own start-up. The split:
 * - `start`: everything the entry imports statically (commander and every command's definition),
 *   which `--help` and every command need, as one file;
 * - `read`: what `runs` and `stats` load when they run (the run reader, the store, the stats
 *   shapes and tables), as one file;
 * - the rest (engine, router, HTTP server, scoring, remote workers) in chunks the commands that
 *   use them import when they run, so they never load at start.
 * Packages stay in node_modules (native addons, pino's transports and the tokenizer and QuickJS
 * threads are found there by path), except commander, which every start loads.
 * Source maps name the .ts files (`node --enable-source-maps`).
 * Runs on: Node (build tool).
 */
import { RUNTIME_MODULE_ID, defineConfig } from 'rolldown';

/** The modules `runs` and `stats` import when they run; what those import comes along. */
const READ_COMMANDS = /[\\/]core[\\/](service[\\/]run-reader|http[\\/]stats-shapes|cli[\\/]run-output|log-spec)\.ts$/;

export default defineConfig({
  input: { main: 'core/cli/main.ts' },
  platform: 'node',
  // Bare specifiers are packages (node: built-ins are external on this platform anyway).
  external: (id) => !/^[./]/.test(id) && !/^(commander|better-sqlite3|bindings|file-uri-to-path)(\/|$)/.test(id),
  // The sources import each other by their compiled names (./x.js for ./x.ts).
  resolve: { extensionAlias: { '.js': ['.ts', '.js'] } },
  output: {
    dir: 'dist/cli',
    cleanDir: true,
    format: 'esm',
    sourcemap: true,
    chunkFileNames: '[name]-[hash].js',
    codeSplitting: {
      groups: [
        { name: 'start', tags: ['$initial'], priority: 2 },
        // Rolldown's own helpers (CommonJS interop for commander) would otherwise be a file of their own.
        { name: 'start', test: (id) => id === RUNTIME_MODULE_ID, priority: 2 },
        { name: 'read', test: READ_COMMANDS, priority: 1 },
      ],
    },
  },
});
