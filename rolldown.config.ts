/**
 * Bundles the `panoptes` command line (core/cli/main.ts) into dist/cli/, which bin/panoptes.cjs
 * loads. Node loads an ES module per file, resolving, reading and compiling each one, and the
 * compiled dist/core/ holds a file per source module: a bundle of a few files is what lets the
 * command start in little more than Node's own start-up. The split:
 * - `start`: everything the entry imports statically (commander and every command's definition),
 *   which `--help` and every command need, as one file;
 * - `read`: what `runs` and `stats` load when they run (the run reader, the store with
 *   better-sqlite3's JavaScript, the stats shapes and tables), as one file;
 * - the rest (engine, router, HTTP server, scoring, remote workers) in chunks the commands that
 *   use them import when they run, so they never load at start.
 * The bundle is CommonJS (the sources stay ES modules): Node 20 sets up its ES-module loader for
 * the first ES module a process loads, and on the reference machine that alone cost 13-30 ms of
 * every start, as much as the rest of `--help`. Built-ins come through require() as well, which
 * spares the ES-module view Node builds of each of them.
 * Packages stay in node_modules (native addons, pino's transports and the tokenizer and QuickJS
 * threads are found there by path), except commander, which every start loads, and
 * better-sqlite3's JavaScript (its addon is loaded by path: see the Store), which `runs` and
 * `stats` load: a file each would cost more than the bytes.
 * Source maps name the .ts files (`node --enable-source-maps`).
 * Runs on: Node (build tool).
 */
import { defineConfig, type Plugin } from 'rolldown';

/**
 * commander requires node:child_process as it loads, for subcommands that are executables of
 * their own, which the command line has none of; that require (node:net comes with it) was 4-6 ms
 * of every start. The bundle's copy of commander requires it when it first spawns. commander is
 * pinned: should its code change, the build stops here rather than ship the require unnoticed.
 */
const commanderSpawnsLazily: Plugin = {
  name: 'commander-spawns-lazily',
  transform: {
    filter: { id: /[\\/]node_modules[\\/]commander[\\/]lib[\\/]command\.js$/ },
    handler(code) {
      const eager = "const childProcess = require('node:child_process');";
      if (!code.includes(eager)) this.error(`commander's lib/command.js no longer holds ${eager}: revisit this plugin`);
      return code.replace(eager, "const childProcess = { spawn: (...args) => require('node:child_process').spawn(...args) };");
    },
  },
};

/** The modules `runs` and `stats` import when they run; what those import comes along. */
const READ_COMMANDS = /[\\/]core[\\/](service[\\/]run-reader|http[\\/]stats-shapes|cli[\\/]run-output|log-spec)\.ts$/;

export default defineConfig({
  input: { main: 'core/cli/main.ts' },
  platform: 'node',
  plugins: [commanderSpawnsLazily],
  // Bare specifiers are packages (node: built-ins are external on this platform anyway); bindings
  // and file-uri-to-path come with better-sqlite3's JavaScript, which requires them.
  external: (id) => !/^[./]/.test(id) && !/^(commander|better-sqlite3|bindings|file-uri-to-path)(\/|$)/.test(id),
  // The sources import each other by their compiled names (./x.js for ./x.ts).
  resolve: { extensionAlias: { '.js': ['.ts', '.js'] } },
  output: {
    dir: 'dist/cli',
    cleanDir: true,
    format: 'cjs',
    sourcemap: true,
    entryFileNames: '[name].cjs',
    chunkFileNames: '[name]-[hash].cjs',
    codeSplitting: {
      groups: [
        { name: 'start', tags: ['$initial'], priority: 2 },
        { name: 'read', test: READ_COMMANDS, priority: 1 },
      ],
    },
  },
});
