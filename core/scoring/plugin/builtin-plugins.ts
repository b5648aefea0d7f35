/**
 * The built-in code plugins. They are JavaScript run in the same sandbox as a user's plugin, with
 * the same caps, so they are what any plugin can be; their source is hashed into their version, so
 * a change to one here makes a new version where it is used. Two built-ins run in Panoptes itself:
 * `url_health`, which needs the network, and `json_parses`, which is the `json` rule without a
 * schema (answer-json.ts), so that the two never disagree on what counts as an answer's JSON.
 * Runs on: Node (core).
 */
import type { BuiltinPlugin } from './code-definition.js';
import type { ScorerKind } from '../../domain.js';

/**
 * Every citation marker ([1], [2, 3], [4-6]) in the text has an entry in the response's list of
 * sources (under a References/Sources heading, or lines that start with [n]), and every listed
 * source is cited. The value is the share of numbers, cited or listed, that are both.
 */
const CITATION_INTEGRITY = String.raw`
function score(input) {
  const lines = String(input.response).split(/\r?\n/);
  const heading = /^\s*(?:#{1,6}\s*)?(?:\*\*|__)?\s*(references|sources|bibliography|citations|works cited)\s*:?\s*(?:\*\*|__)?\s*:?\s*$/i;
  const start = lines.findIndex((l) => heading.test(l));
  const listed = new Set();
  const body = [];
  lines.forEach((line, i) => {
    const inList = start >= 0 && i > start;
    const entry = inList ? /^\s*(?:[-*]\s*)?(?:\[(\d+)\]|\(?(\d+)[.)])\s*\S/.exec(line) : /^\s*\[(\d+)\][:.]?\s+\S/.exec(line);
    if (entry) listed.add(Number(entry[1] || entry[2]));
    else if (!inList && i !== start) body.push(line);
  });
  const cited = new Set();
  for (const m of body.join('\n').matchAll(/\[(\d+(?:\s*[-\u2013,]\s*\d+)*)\](?!\()/g)) {
    for (const part of m[1].split(',')) {
      const [a, b] = part.split(/[-\u2013]/).map((n) => Number(n.trim()));
      if (b === undefined) cited.add(a);
      else for (let n = a; n <= b && n - a < 1000; n++) cited.add(n);
    }
  }
  const all = new Set([...cited, ...listed]);
  if (all.size === 0) return { value: 1, passed: true, explanation: 'no citations and no sources' };
  const dangling = [...cited].filter((n) => !listed.has(n)).sort((x, y) => x - y);
  const uncited = [...listed].filter((n) => !cited.has(n)).sort((x, y) => x - y);
  const value = (all.size - dangling.length - uncited.length) / all.size;
  const says = [];
  if (dangling.length) says.push('cited with no source listed: ' + dangling.map((n) => '[' + n + ']').join(', '));
  if (uncited.length) says.push('listed but never cited: ' + uncited.map((n) => '[' + n + ']').join(', '));
  return { value, passed: says.length === 0, explanation: says.join('; ') };
}
`;

/** The built-ins that run in the sandbox as they are, and whether each passes or fails or grades. */
export const BUILTIN_SOURCES: Partial<Record<BuiltinPlugin, { source: string; kind: ScorerKind }>> = {
  citation_integrity: { source: CITATION_INTEGRITY, kind: 'graded' },
};
