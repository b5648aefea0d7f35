#!/usr/bin/env node
// @ts-check
/**
 * Builds a copy of better-sqlite3 for Electron's ABI into `.electron-native/`, leaving the Node
 * build in node_modules untouched (the tests and the CLI keep using it). A native addon is built
 * for one ABI: Node's and Electron's differ, so the desktop app loads this copy through
 * better-sqlite3's `nativeBinding` option instead.
 * How: stage a copy of the installed better-sqlite3 sources in `.electron-native/stage/`, run
 * `@electron/rebuild` there against the installed `electron` version (it fetches Electron's
 * headers, or a prebuilt binary, once), keep the addon, and record what it was built for, so the
 * next `npm start` skips the build unless Electron, better-sqlite3, the platform or the arch changed.
 * Usage: `node scripts/electron-native.mjs [--force]`; prints progress on stderr and ONE JSON line
 * on stdout: {"path", "built", "electron", "betterSqlite3"}. `npm start` runs it before launching.
 * Runs on: Node (build script).
 */
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Where the Electron build lives, relative to the package root. */
export const NATIVE_DIR = '.electron-native';
export const ADDON_NAME = 'better_sqlite3.node';

/** @param {string} root */
export function nativeBindingPath(root) {
  return join(root, NATIVE_DIR, ADDON_NAME);
}

/** @param {string} file @returns {any} */
function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/**
 * @typedef {{ electron: string, betterSqlite3: string, platform: string, arch: string }} BuildTarget
 * @typedef {(options: { buildPath: string, electronVersion: string, arch: string, onlyModules: string[], force: boolean }) => Promise<unknown>} Rebuild
 */

/** What a build is for: the installed Electron and better-sqlite3, on this platform and arch. @param {string} root @returns {BuildTarget} */
export function buildTarget(root) {
  return {
    electron: readJson(join(root, 'node_modules', 'electron', 'package.json')).version,
    betterSqlite3: readJson(join(root, 'node_modules', 'better-sqlite3', 'package.json')).version,
    platform: process.platform,
    arch: process.arch,
  };
}

/** True when the addon exists and was built for exactly `target`. @param {string} root @param {BuildTarget} target */
export function isUpToDate(root, target) {
  const stamp = join(root, NATIVE_DIR, 'build.json');
  if (!existsSync(nativeBindingPath(root)) || !existsSync(stamp)) return false;
  const built = readJson(stamp);
  return Object.entries(target).every(([k, v]) => built[k] === v);
}

/**
 * Builds the Electron-ABI addon unless an up-to-date one exists.
 * @param {{ root: string, force?: boolean, rebuild?: Rebuild, log?: (line: string) => void }} options
 * @returns {Promise<{ path: string, built: boolean } & BuildTarget>}
 */
export async function buildElectronNative({ root, force = false, rebuild, log = () => {} }) {
  const target = buildTarget(root);
  const out = nativeBindingPath(root);
  if (!force && isUpToDate(root, target)) return { path: out, built: false, ...target };

  const dir = join(root, NATIVE_DIR);
  const stage = join(dir, 'stage');
  const source = join(root, 'node_modules', 'better-sqlite3');
  const staged = join(stage, 'node_modules', 'better-sqlite3');
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(staged, { recursive: true });
  writeFileSync(
    join(stage, 'package.json'),
    JSON.stringify({ name: 'panoptes-electron-native', private: true, dependencies: { 'better-sqlite3': target.betterSqlite3 } }),
  );
  // The sources only: the Node build in build/ must neither be reused nor touched.
  const nodeBuild = join(source, 'build');
  // dereference: with pnpm (or npm link) node_modules/better-sqlite3 is a symlink into a store.
  cpSync(source, staged, { recursive: true, dereference: true, filter: (p) => p !== nodeBuild && !p.startsWith(nodeBuild + sep) });

  log(`building better-sqlite3 ${target.betterSqlite3} for Electron ${target.electron} (${target.platform}-${target.arch})`);
  try {
    const run = rebuild ?? /** @type {Rebuild} */ ((await import('@electron/rebuild')).rebuild);
    await run({ buildPath: stage, electronVersion: target.electron, arch: target.arch, onlyModules: ['better-sqlite3'], force: true });
    const addon = join(staged, 'build', 'Release', ADDON_NAME);
    if (!existsSync(addon)) throw new Error(`@electron/rebuild finished but left no ${addon}`);
    const tmp = `${out}.tmp`;
    cpSync(addon, tmp);
    renameSync(tmp, out);
    writeFileSync(join(dir, 'build.json'), `${JSON.stringify(target, null, 2)}\n`);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  return { path: out, built: true, ...target };
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  try {
    const result = await buildElectronNative({
      root,
      force: process.argv.includes('--force'),
      log: (line) => process.stderr.write(`electron-native: ${line}\n`),
    });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (err) {
    process.stderr.write(`electron-native: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
