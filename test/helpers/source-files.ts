/**
 * The project's source files under a folder, as the doc checks read them: every .ts, .tsx, .cts
 * and .mts file at any depth, in the order the folder lists them.
 * Runs on: Node (tests).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourcesUnder(join(dir, e.name)) : /\.(ts|tsx|cts|mts)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}
