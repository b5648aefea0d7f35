/**
 * The command line starts light: `panoptes --help` lists every command with its description and
 * every command's own `--help` works, while loading none of the engine (the commands load what
 * they use when they run); `runs` and `stats` read the store without the router, the providers,
 * scoring or the HTTP server. What a process loaded is recorded by a module hook in the child, so
 * the test sees what `node bin/panoptes.js` really imports. (How fast it starts is measured by
 * `npm run bench -- startup`, not here.) Counts are grouped as the app groups them.
 * Runs on: Node (tests).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatInt as cliInt } from '../../core/cli/common.js';
import { buildProgram } from '../../core/cli/main.js';
import { formatInt as appInt } from '../../renderer/src/format.js';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeManifest, writeMockCatalog } from '../helpers/temp.js';

/** Node's `--import` argument that appends the URL of every module the process loads to `file`. */
function recordLoads(file: string): string {
  const hook = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(file)}, url + '\\n');
  return next(url, context);
}`;
  const register = `import { register } from 'node:module';
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
  return `--import=data:text/javascript,${encodeURIComponent(register)}`;
}

const ENGINE = [
  /\/node_modules\/fastify\//,
  /\/node_modules\/pino\//,
  /\/node_modules\/openai\//,
  /\/node_modules\/@anthropic-ai\//,
  /\/dist\/core\/models\/router\//,
  /\/dist\/core\/models\/providers\//,
  /\/dist\/core\/scoring\/score-worker\.js$/,
  /\/dist\/core\/scheduler\/scheduler\.js$/,
  /\/dist\/core\/service\/engine\.js$/,
];
const STORE = [/\/node_modules\/better-sqlite3\//, /\/node_modules\/zod\//, /\/dist\/core\/store\//];

describe('the command line starts light', () => {
  let tmp: ReturnType<typeof tempDir>;
  let common: string[];
  beforeAll(async () => {
    tmp = tempDir();
    const catalog = writeMockCatalog(tmp.dir, { 'mock-alpha': { latencyMs: 0 } });
    common = ['--data-dir', join(tmp.dir, 'data'), '--catalog', catalog];
    const manifest = writeManifest(tmp.dir, 3);
    expect((await runCli(['run', '--manifest', manifest, '--models', 'mock-alpha', '--json', ...common])).code).toBe(0);
  });
  afterAll(() => tmp.cleanup());

  async function loadsOf(args: string[], name: string): Promise<{ stdout: string; loads: string[] }> {
    const file = join(tmp.dir, `${name}.loads`);
    const res = await runCli(args, { NODE_OPTIONS: recordLoads(file) });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    return { stdout: res.stdout, loads: readFileSync(file, 'utf8').trim().split('\n') };
  }

  it('--help lists every command with its description, and loads neither the engine nor the store', async () => {
    const { stdout, loads } = await loadsOf(['--help'], 'help');
    const commands = buildProgram().commands;
    expect(commands.length).toBeGreaterThanOrEqual(12);
    for (const c of commands) {
      expect(stdout).toMatch(new RegExp(`^  ${c.name()}\\b.*`, 'm'));
      // Commander wraps long descriptions: compare with the whitespace folded.
      expect(stdout.replace(/\s+/g, ' ')).toContain(c.description());
    }
    for (const heavy of [...ENGINE, ...STORE]) expect(loads.filter((u) => heavy.test(u))).toEqual([]);
  });

  it("every command's --help prints its usage and options", async () => {
    for (const c of buildProgram().commands) {
      const res = await runCli([c.name(), '--help']);
      expect(res.code, c.name()).toBe(0);
      expect(res.stdout, c.name()).toContain(`Usage: panoptes ${c.name()}`);
      for (const o of c.options) expect(res.stdout, `${c.name()} ${o.flags}`).toContain(o.long ?? o.flags);
    }
  });

  it('runs and stats read the store without the engine', async () => {
    const runs = await loadsOf(['runs', ...common], 'runs');
    expect(runs.stdout).toMatch(/^run +status/);
    expect(runs.stdout).toContain('mock-alpha x1');
    const stats = await loadsOf(['stats', ...common], 'stats');
    expect(stats.stdout).toMatch(/^mock-alpha +3 /m);
    for (const { loads } of [runs, stats]) {
      expect(loads.some((u) => /\/dist\/core\/store\/store\.js$/.test(u))).toBe(true);
      for (const heavy of ENGINE) expect(loads.filter((u) => heavy.test(u))).toEqual([]);
    }
  });

  it('stats of an unknown run is refused by name', async () => {
    const res = await runCli(['stats', '--run', 'r-none', ...common]);
    expect(res.code).toBe(2);
    expect(res.stderr.trim()).toBe('panoptes: no run "r-none"');
  });

  it('groups counts as the app does', () => {
    for (const n of [0, 7, 999, 1000, 12_345, 999_999, 1_000_000, 1_234_567_890, -4_321, 2 ** 53 - 1, 12.5, 2 ** 60]) expect(cliInt(n)).toBe(appInt(n));
  });
});
