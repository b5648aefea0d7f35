/**
 * The docs' links lead somewhere: every relative link of README.md and docs/ names a file that
 * exists, and a link to a heading (`page.md#anchor`, `#anchor`) names a heading that page has, as
 * GitHub makes its anchor.
 * Runs on: Node (tests).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesUnder } from '../helpers/source-files.js';

const PAGES = ['README.md', ...filesUnder('docs', /\.md$/)];

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a page's headings, a repeated one numbered as GitHub numbers it. */
function anchorsOf(page: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  const text = readFileSync(page, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = anchorOf(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Every relative link of a page, outside code: [text](target). */
function linksOf(page: string): string[] {
  const text = readFileSync(page, 'utf8')
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/.test(l));
}

function brokenLinks(page: string): string[] {
  return linksOf(page).filter((link) => {
    const [path, anchor] = link.split('#');
    const target = path ? resolve(dirname(page), path) : resolve(page);
    if (!existsSync(target)) return true;
    if (anchor === undefined || statSync(target).isDirectory() || !target.endsWith('.md')) return false;
    return !anchorsOf(target).has(anchor);
  });
}

describe('the docs links', () => {
  it('finds the pages and their links', () => {
    expect(PAGES.length).toBeGreaterThan(20);
    expect(PAGES.flatMap(linksOf).length).toBeGreaterThan(50);
  });

  it.each(PAGES)('%s links only to files and headings that exist', (page) => {
    expect(brokenLinks(page)).toEqual([]);
  });

  it('makes anchors as GitHub does', () => {
    expect(anchorOf("Scoring: scorer versions, the durable score queue")).toBe('scoring-scorer-versions-the-durable-score-queue');
    expect(anchorOf('responses.jsonl')).toBe('responsesjsonl');
    expect(anchorOf('core/models/router/')).toBe('coremodelsrouter');
  });
});
