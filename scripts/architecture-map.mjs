#!/usr/bin/env node
/**
 * Writes the map of docs/ARCHITECTURE.md: for each folder of core/, electron/ and renderer/src/, a
 * table of its source files and what each is for, taken from the first sentence of the file's own
 * header comment (every source file has one: test/architecture/runs-on.test.ts), so the map says
 * what the code says and a new file is one run of this script away from it:
 *
 *     node scripts/architecture-map.mjs            # rewrites the map
 *     node scripts/architecture-map.mjs --check    # exits 1 when the map and the files differ
 *
 * The map sits between the page's `<!-- map:start -->` and `<!-- map:end -->` marks; the rest of
 * the page is left as it is.
 * Runs on: Node (tooling).
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const START = '<!-- map:start -->';
const END = '<!-- map:end -->';
const ROOTS = ['core', 'electron', 'renderer/src'];
const SOURCE = /\.(ts|tsx|cts|mts)$/;
const LONGEST = 150;

/** Every folder under the roots holding source files, each with its files, in path order. */
function folders() {
  const out = [];
  const walk = (dir) => {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
    const files = entries.filter((e) => e.isFile() && SOURCE.test(e.name) && !e.name.endsWith('.d.ts')).map((e) => e.name);
    if (files.length > 0) out.push({ dir, files });
    for (const e of entries) if (e.isDirectory()) walk(join(dir, e.name));
  };
  for (const root of ROOTS) walk(root);
  return out;
}

/** What a file is for: its header comment's first sentence, its lead-in where that says it, else shortened. */
function purpose(path) {
  const src = readFileSync(path, 'utf8');
  const m = /^(?:#!.*\n)?(?:\/\/.*\n)*\s*\/\*\*?([\s\S]*?)\*\//.exec(src) ?? /^((?:\/\/.*\n)+)/.exec(src);
  const text = (m ? m[1] : '')
    .split('\n')
    .map((l) => l.replace(/^\s*(\*|\/\/) ?/, ''))
    .join(' ')
    .replace(/Runs on:.*$/s, '')
    .replace(/\s+/g, ' ')
    .trim();
  const sentence = /^(.*?[.])(\s|$)/.exec(text)?.[1] ?? text;
  const colon = sentence.indexOf(': ');
  const lead = colon > 0 ? sentence.slice(0, colon) : '';
  let line = lead.split(' ').length >= 3 ? lead : sentence;
  if (line.length > LONGEST) line = line.slice(0, line.lastIndexOf(' ', LONGEST)) + ' …';
  return line.replace(/\.$/, '').replace(/\|/g, '\\|');
}

function renderMap() {
  const lines = [START];
  for (const { dir, files } of folders()) {
    lines.push('', `### ${dir}/`, '', '| file | what it is for |', '|---|---|');
    for (const f of files) lines.push(`| \`${f}\` | ${purpose(join(dir, f))} |`);
  }
  lines.push('', END);
  return lines.join('\n');
}

function main(argv) {
  const pagePath = argv.find((a) => !a.startsWith('--')) ?? 'docs/ARCHITECTURE.md';
  const page = readFileSync(pagePath, 'utf8');
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) {
    process.stderr.write(`${pagePath}: no ${START} ... ${END} section\n`);
    return 2;
  }
  const next = page.slice(0, start) + renderMap() + page.slice(end + END.length);
  if (argv.includes('--check')) {
    if (next === page) return 0;
    process.stderr.write(`${pagePath}: the map differs from the files (run node scripts/architecture-map.mjs)\n`);
    return 1;
  }
  writeFileSync(pagePath, next);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
