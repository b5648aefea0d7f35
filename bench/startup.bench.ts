/**
 * Start-up of the `panoptes` command (target: under 150 ms wall each): `--help`, `runs` and
 * `stats` over a data folder holding three finished runs of the demo manifest, each run as a person
 * runs it (a fresh `node bin/panoptes.cjs` process, which is most of the cost), timed from spawn to
 * exit. `node -e 0` is timed beside them as the floor no command beats on this machine, and every
 * figure is also given over that floor: on a busy machine Node's own start-up swells with the load,
 * and the part over the floor is what the command itself costs. The commands take turns, so a busy
 * minute weighs on all of them alike. BENCH_STARTUP_BASELINE=<another build's bin/panoptes.*>
 * times that build's three commands in the same rounds, taking turns with these (A/B), so a change
 * is measured against what it replaces under the same load.
 * Runs on: Node.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { examplesDir, packageRoot } from '../core/paths.js';
import { round } from './support.js';

const ROUNDS = Number(process.env.BENCH_STARTUP_ROUNDS ?? 15);
const bin = join(packageRoot(), 'bin', 'panoptes.cjs');
const baseline = process.env.BENCH_STARTUP_BASELINE;

function node(args: string[]): number {
  const start = process.hrtime.bigint();
  const res = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (res.status !== 0) throw new Error(`node ${args.join(' ')} exited ${res.status}: ${res.stderr}`);
  return ms;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const dir = mkdtempSync(join(tmpdir(), 'panoptes-bench-startup-'));
try {
  const dataDir = join(dir, 'data');
  for (const model of ['mock-fast', 'mock-strong', 'mock-weak']) {
    node([bin, 'run', '--manifest', join(examplesDir(), 'demo-manifest.jsonl'), '--models', model, '--json', '--no-progress', '--data-dir', dataDir]);
  }
  const commands: Record<string, string[]> = {
    floor: ['-e', '0'],
    help: [bin, '--help'],
    runs: [bin, 'runs', '--data-dir', dataDir],
    stats: [bin, 'stats', '--data-dir', dataDir],
    ...(baseline === undefined
      ? {}
      : {
          baseline_help: [baseline, '--help'],
          baseline_runs: [baseline, 'runs', '--data-dir', dataDir],
          baseline_stats: [baseline, 'stats', '--data-dir', dataDir],
        }),
  };
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  const loadBefore = loadavg()[0]!;
  // One untimed round first: the files come into the page cache.
  for (const args of Object.values(commands)) node(args);
  for (let i = 0; i < ROUNDS; i++) {
    for (const [name, args] of Object.entries(commands)) times[name]!.push(node(args));
  }
  const floor = median(times.floor!);
  const command = (name: string) => ({ median_ms: round(median(times[name]!), 1), over_floor_ms: round(median(times[name]!) - floor, 1), min_ms: round(Math.min(...times[name]!), 1) });
  process.stdout.write(
    JSON.stringify({
      rounds: ROUNDS,
      load_average_1m: [round(loadBefore), round(loadavg()[0]!)],
      node_floor_median_ms: round(floor, 1),
      help: command('help'),
      runs: command('runs'),
      stats: command('stats'),
      ...(baseline === undefined ? {} : { baseline: { bin: baseline, help: command('baseline_help'), runs: command('baseline_runs'), stats: command('baseline_stats') } }),
    }) + '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
