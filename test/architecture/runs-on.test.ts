/**
 * Every source file says where it may run, and the claim fits where it lives: core/ is plain Node,
 * electron/ is Electron's main process (or its sandboxed preload), renderer/ is the page. What each
 * place may import is checked by the layer rules in .dependency-cruiser.cjs (`npm run lint`).
 * Runs on: Node (tests).
 */
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const SOURCES = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'core', 'electron', 'renderer/src'], {
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => /\.(ts|tsx|cts)$/.test(f) && !f.endsWith('.d.ts'));

/** The claim a file in this folder must make. */
function expectedClaim(file: string): RegExp {
  if (file.startsWith('core/common/')) return /^Node \(core\) and the renderer \(browser-safe\)/;
  if (file.startsWith('core/')) return /^Node \(core\)/;
  if (file === 'electron/preload.cts') return /^Electron renderer \(sandboxed preload\)/;
  if (file.startsWith('electron/')) return /^Electron main/;
  return /^renderer/;
}

describe('where each file may run', () => {
  it('finds the sources', () => {
    expect(SOURCES.length).toBeGreaterThan(100);
  });

  it.each(SOURCES)('%s declares a Runs on: that fits its folder', (file) => {
    const header = readFileSync(file, 'utf8').slice(0, 3000);
    const claim = /Runs on: ([^\n*]+)/.exec(header)?.[1]?.trim();
    expect(claim, `${file} has no "Runs on:" line in its header comment`).toBeDefined();
    expect(claim).toMatch(expectedClaim(file));
  });

  it('a core file whose types the renderer shares imports only types itself', () => {
    for (const file of SOURCES.filter((f) => f.startsWith('core/'))) {
      const text = readFileSync(file, 'utf8');
      if (!/Runs on: Node \(core\); types shared with the renderer/.test(text)) continue;
      // The renderer bundles none of core, so what it imports types from must not need Node at run time.
      expect(text, file).not.toMatch(/^import .* from 'node:/m);
    }
  });
});
