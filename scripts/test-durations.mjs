#!/usr/bin/env node
/**
 * Writes the table of per-file test durations in docs/contributing/tests.md from a vitest JSON
 * report, so the page says what each file costs and a slow newcomer stands out. Every vitest run
 * writes that report to test-results/vitest.json (test/helpers/json-file-reporter.ts), so after a
 * full run:
 *
 *     npx vitest run
 *     node scripts/test-durations.mjs test-results/vitest.json
 *
 * The table sits between the page's `<!-- durations:start -->` and `<!-- durations:end -->` marks;
 * the rest of the page is left as it is. The line above the table gives the date, the machine and the
 * totals, so figures from different days are not read as one.
 * Runs on: Node (tooling).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { relative, resolve } from 'node:path';

const [reportPath, pagePath = 'docs/contributing/tests.md'] = process.argv.slice(2);
if (!reportPath) {
  process.stderr.write('usage: node scripts/test-durations.mjs VITEST_JSON [PAGE]\n');
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
const root = resolve('.');
const rows = report.testResults
  .map((f) => ({
    file: relative(root, f.name),
    seconds: (f.endTime - f.startTime) / 1000,
    tests: f.assertionResults.length,
    skipped: f.assertionResults.filter((a) => a.status === 'skipped' || a.status === 'pending').length,
    failed: f.assertionResults.filter((a) => a.status === 'failed').length,
  }))
  .sort((a, b) => b.seconds - a.seconds);

const total = rows.reduce((s, r) => s + r.seconds, 0);
const when = new Date(report.startTime).toISOString().slice(0, 10);
const machine = `${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), load average ${loadavg()[0].toFixed(1)} when written`;
const lines = [
  '<!-- durations:start -->',
  `Measured ${when} on ${machine}: ${report.numTotalTests} tests in ${rows.length} files, ` +
    `${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests} skipped; ` +
    `${Math.round(total)} s of test time summed over files (vitest runs files in parallel, so the wall time is shorter).`,
  '',
  '| file | tests | skipped | seconds |',
  '|---|---:|---:|---:|',
  ...rows.map((r) => `| \`${r.file}\` | ${r.tests} | ${r.skipped || ''} | ${r.seconds.toFixed(1)} |`),
  '<!-- durations:end -->',
];

const page = readFileSync(pagePath, 'utf8');
const start = page.indexOf('<!-- durations:start -->');
const end = page.indexOf('<!-- durations:end -->');
const table = lines.join('\n');
const next =
  start >= 0 && end > start
    ? page.slice(0, start) + table + page.slice(end + '<!-- durations:end -->'.length)
    : `${page.trimEnd()}\n\n## What each file costs\n\n${table}\n`;
writeFileSync(pagePath, next);
process.stdout.write(`${pagePath}: ${rows.length} files, ${Math.round(total)} s\n`);
