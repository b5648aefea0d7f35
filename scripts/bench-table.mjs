#!/usr/bin/env node
/**
 * Renders the table of benchmark results in docs/contributing/benchmarks.md from the committed JSON
 * results in bench/results/ (one file a benchmark: the date, the machine, the command and what the
 * command printed), so the table says what the JSON says and nothing else:
 *
 *     npm run bench -- judge > out.json          # then keep it with its date and machine:
 *     node scripts/bench-table.mjs --record judge out.json   # --load X: the load while it ran, if not now
 *     node scripts/bench-table.mjs               # rewrites the table
 *     node scripts/bench-table.mjs --check       # exits 1 when the table and the JSON differ
 *
 * The table sits between the page's `<!-- bench:start -->` and `<!-- bench:end -->` marks; the
 * prose around it is left as it is. Every figure of a result is a row (nested keys joined by dots;
 * a list of numbers reads as its values), the benchmark's date, machine and command on its first.
 * Runs on: Node (tooling).
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const START = '<!-- bench:start -->';
const END = '<!-- bench:end -->';

/** The numbers of a result as [figure, text] rows, in the order the benchmark printed them. */
function figures(value, prefix = '') {
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return [[prefix, String(value)]];
  if (Array.isArray(value)) {
    return value.every((v) => typeof v === 'number') ? [[prefix, value.join(', ')]] : value.flatMap((v, i) => figures(v, `${prefix}[${i}]`));
  }
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => figures(v, prefix ? `${prefix}.${k}` : k));
  return [];
}

function renderTable(resultsDir) {
  const files = readdirSync(resultsDir).filter((f) => f.endsWith('.json')).sort();
  const lines = [START, '| benchmark | figure | value | measured | command |', '|---|---|---|---|---|'];
  for (const f of files) {
    const r = JSON.parse(readFileSync(join(resultsDir, f), 'utf8'));
    const name = f.slice(0, -'.json'.length);
    // The benchmark, its date, machine and command on its first row only.
    figures(r.result).forEach(([figure, value], i) => {
      const about = i === 0 ? [`\`${name}\``, `${r.date}, ${r.machine}`, `\`${r.command}\``] : ['', '', ''];
      lines.push(`| ${about[0]} | \`${figure}\` | ${value} | ${about[1]} | ${about[2]} |`);
    });
  }
  lines.push(END);
  return lines.join('\n');
}

function withTable(page, table) {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`the page has no ${START} ... ${END} section`);
  return page.slice(0, start) + table + page.slice(end + END.length);
}

function main(argv) {
  const resultsDir = 'bench/results';
  if (argv[0] === '--record') {
    const [, name, file] = argv;
    const printed = JSON.parse(readFileSync(file, 'utf8'));
    // --load X: the load average seen while the benchmark ran, when it is recorded later (else now's).
    const at = argv.indexOf('--load');
    const load = at > 0 ? Number(argv[at + 1]) : loadavg()[0];
    const machine = `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.versions.node}, load average ${load.toFixed(1)}`;
    const result = { date: new Date().toISOString().slice(0, 10), machine, command: `npm run bench -- ${name}`, result: printed[name] ?? printed };
    writeFileSync(join(resultsDir, `${name}.json`), JSON.stringify(result, null, 2) + '\n');
    return 0;
  }
  const check = argv[0] === '--check';
  const pagePath = argv.find((a) => !a.startsWith('--')) ?? 'docs/contributing/benchmarks.md';
  const page = readFileSync(pagePath, 'utf8');
  const next = withTable(page, renderTable(resultsDir));
  if (check) {
    if (next === page) return 0;
    process.stderr.write(`${pagePath}: the benchmark table differs from bench/results/ (run node scripts/bench-table.mjs)\n`);
    return 1;
  }
  writeFileSync(pagePath, next);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
