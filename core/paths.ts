/**
 * Where Panoptes keeps its data: PANOPTES_DATA_DIR, else the platform's user data folder.
 * Runs on: Node (core).
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.PANOPTES_DATA_DIR) return resolve(env.PANOPTES_DATA_DIR);
  const home = homedir();
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'Panoptes');
  if (platform === 'win32') return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Panoptes');
  return join(env.XDG_DATA_HOME ?? join(home, '.local', 'share'), 'panoptes');
}

/**
 * The package's root folder (where examples/ lives), from this file's place: core/paths.ts in the
 * sources, dist/core/paths.js compiled, or a chunk of the command line's bundle in dist/cli/.
 */
export function packageRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return here.endsWith(join('dist', 'core')) || here.endsWith(join('dist', 'cli')) ? resolve(here, '..', '..') : resolve(here, '..');
}

export function examplesDir(): string {
  return join(packageRoot(), 'examples');
}

export function databasePath(dataDir: string): string {
  return join(dataDir, 'panoptes.db');
}

/** A run's append-only log of its records: `<data-dir>/runs/<run-id>/responses.jsonl`. */
export function responsesPath(dataDir: string, runId: string): string {
  return join(dataDir, 'runs', runId, 'responses.jsonl');
}

/** The version in the package's package.json. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
