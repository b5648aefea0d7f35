/**
 * docs/ARCHITECTURE.md stays a true map: every folder of core/, electron/ and renderer/src/ is named in it, the generated map
 * of files matches the files and their header comments, every source path the page names exists,
 * and the layer diagram's arrows are exactly the layers the sources import.
 * Runs on: Node (tests).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourcesUnder } from '../helpers/source-files.js';

const PAGE = 'docs/ARCHITECTURE.md';
const page = readFileSync(PAGE, 'utf8');

function foldersUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [join(dir, e.name), ...foldersUnder(join(dir, e.name))]);
}

/** The layer a source file belongs to: a folder of core/ (`core/scoring`), the vocabulary (`core/*.ts`), `electron` or `renderer`. */
function layerOf(file: string): string {
  if (file.startsWith('renderer/')) return 'renderer';
  if (file.startsWith('electron/')) return 'electron';
  const parts = file.split('/');
  return parts.length === 2 ? 'core/*.ts' : `core/${parts[1]}`;
}

/** What every layer may use without an arrow of its own: the diagram's last line. */
const BASE = new Set(['core/*.ts', 'core/concurrency', 'core/common']);


/** Every "from layer -> to layer" the sources import (static, re-exported or with `import()`), the base aside. */
function importedArrows(): Set<string> {
  const arrows = new Set<string>();
  for (const file of ['core', 'electron', 'renderer/src'].flatMap(sourcesUnder)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const from = layerOf(file);
      const to = layerOf(relative('.', resolve(dirname(file), m[1]!)));
      if (from !== to && (from === 'renderer' || !BASE.has(to))) arrows.add(`${from} -> ${to}`);
    }
  }
  return arrows;
}

/** The arrows the page's layer diagram draws: `from ──▶ to (why), to, ...`, one line per layer. */
function drawnArrows(): Set<string> {
  const diagram = /## Layers and the direction of dependencies[\s\S]*?```text\n([\s\S]*?)```/.exec(page)?.[1] ?? '';
  const arrows = new Set<string>();
  for (const line of diagram.split('\n')) {
    const [from, to] = line.split('──▶').map((s) => s.trim());
    if (!from || !to || from.includes(',')) continue; // the base line: every layer uses it
    for (const target of to.replace(/\([^)]*\)/g, '').split(',')) {
      arrows.add(`${from} -> ${target.trim().replace(/^core\/service\/contract\.ts$/, 'core/service')}`);
    }
  }
  return arrows;
}

describe('the architecture map', () => {
  it('draws every layer arrow the sources import, and no other', () => {
    const imported = importedArrows();
    const drawn = drawnArrows();
    expect(drawn.size).toBeGreaterThan(20);
    expect([...imported].filter((a) => !drawn.has(a)).sort(), 'imported but not drawn').toEqual([]);
    expect([...drawn].filter((a) => !imported.has(a)).sort(), 'drawn but never imported').toEqual([]);
  });


  it('names every folder of core/, electron/ and renderer/src/', () => {
    const folders = ['core', 'electron', 'renderer/src'].flatMap((root) => [root, ...foldersUnder(root)]);
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
