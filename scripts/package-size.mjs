#!/usr/bin/env node
/**
 * Prints, as JSON, the unpacked size of the file set the desktop package holds (where Electron
 * itself cannot be fetched, this is what electron-builder would pack around it), beside the set of
 * every production dependency that it packed before the desktop file set was computed.
 *   npm run build && node scripts/package-size.mjs
 * Runs on: Node (a maintainer's tool).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const { DESKTOP_RUNTIME, excludedPackages, reachable } = require('./desktop-files.cjs');
const root = process.cwd();

/** Bytes and files under `dir`, skipping paths `skip` says no to. */
function sizeOf(dir, skip = () => false) {
  let bytes = 0;
  let files = 0;
  if (!existsSync(dir)) return { bytes, files };
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (skip(p)) continue;
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        bytes += statSync(p).size;
        files += 1;
      }
    }
  };
  walk(dir);
  return { bytes, files };
}

function add(a, b) {
  return { bytes: a.bytes + b.bytes, files: a.files + b.files };
}

const sqliteSources = /node_modules\/better-sqlite3\/(build|deps|src)(\/|$)/;
const project = [
  sizeOf(join(root, 'dist'), (p) => /\/dist\/bench(\/|$)/.test(p) || p.endsWith('.map')),
  sizeOf(join(root, 'examples')),
  { bytes: statSync(join(root, 'package.json')).size, files: 1 },
].reduce(add);

function modulesSize(names) {
  return [...names].map((n) => sizeOf(join(root, 'node_modules', n), (p) => sqliteSources.test(p))).reduce(add, { bytes: 0, files: 0 });
}

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const production = reachable(root, Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }));
const excluded = new Set(excludedPackages(root));
const desktop = [...production].filter((n) => !excluded.has(n));
const mb = (s) => Math.round(s.bytes / 1e5) / 10;

const before = add(project, modulesSize(production));
const after = add(project, modulesSize(desktop));
console.log(
  JSON.stringify(
    {
      platform: `${process.platform}-${process.arch}`,
      desktop_runtime: DESKTOP_RUNTIME,
      every_production_dependency: { packages: production.size, unpacked_mb: mb(before), files: before.files },
      desktop_file_set: { packages: desktop.length, unpacked_mb: mb(after), files: after.files },
      project_files_mb: mb(project),
    },
    null,
    2,
  ),
);
