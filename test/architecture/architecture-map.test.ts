/**
 * docs/ARCHITECTURE.md stays a true map: every folder under core/ is named in it, the generated map
 * of files matches the files and their header comments, and every source path the page names
 * exists.
 * Runs on: Node (tests).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const PAGE = 'docs/ARCHITECTURE.md';
const page = readFileSync(PAGE, 'utf8');

function foldersUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [join(dir, e.name), ...foldersUnder(join(dir, e.name))]);
}

describe('the architecture map', () => {
  it('names every folder under core/', () => {
    const folders = foldersUnder('core');
    expect(folders.length).toBeGreaterThan(10);
    const missing = folders.filter((f) => !page.includes(`${f}/`));
    expect(missing).toEqual([]);
  });

  it('lists the files as they are (node scripts/architecture-map.mjs rewrites it)', () => {
    const res = spawnSync(process.execPath, ['scripts/architecture-map.mjs', '--check', PAGE], { encoding: 'utf8', timeout: 30_000 });
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
  });

  it('names only source paths that exist', () => {
    const named = [...new Set([...page.matchAll(/`((?:core|electron|renderer\/src)\/[\w./-]+\.tsx?)`/g)].map((m) => m[1]!))];
    expect(named.length).toBeGreaterThan(20);
    // A pattern (`NNN-name.ts`) stands for a family of files, not a path.
    expect(named.filter((p) => !/NNN/.test(p) && !existsSync(p))).toEqual([]);
  });
});
