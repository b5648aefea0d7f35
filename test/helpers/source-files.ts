/**
 * The project's files under a folder, as the doc checks read them: those whose name matches, at
 * any depth, in the order the folder lists them; source files are .ts, .tsx, .cts and .mts.
 * Runs on: Node (tests).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export function filesUnder(dir: string, name: RegExp): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name), name) : name.test(e.name) ? [join(dir, e.name)] : [],
  );
}

export function sourcesUnder(dir: string): string[] {
  return filesUnder(dir, /\.(ts|tsx|cts|mts)$/);
}
