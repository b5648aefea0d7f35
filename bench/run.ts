/**
 * `npm run bench`: runs every `bench/*.bench.ts` (compiled to dist/bench) in its own process, one
 * after another so they do not disturb each other, and prints one JSON object: each benchmark's
 * own JSON result under its name. `npm run bench -- engine` runs only benchmarks whose name matches.
 * Runs on: Node.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const filter = process.argv.slice(2);
const benches = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .map((f) => f.slice(0, -'.bench.js'.length))
  .filter((name) => filter.length === 0 || filter.some((f) => name.includes(f)))
  .sort();

const results: Record<string, unknown> = {};
let failed = false;
for (const name of benches) {
  process.stderr.write(`bench ${name}...\n`);
  const res = spawnSync(process.execPath, ['--expose-gc', join(here, `${name}.bench.js`)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  });
  const lastLine = res.stdout.trim().split('\n').pop() ?? '';
  try {
    results[name] = JSON.parse(lastLine);
  } catch {
    failed = true;
    results[name] = { error: `exit ${res.status}`, output: res.stdout.slice(-2000) };
  }
}
process.stdout.write(JSON.stringify(results, null, 2) + '\n');
process.exitCode = failed ? 1 : 0;
