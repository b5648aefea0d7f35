/**
 * The command line starts light: `panoptes --help` lists every command with its description and
 * every command's own `--help` works, while loading none of the engine (the commands load what
 * they use when they run); `runs` and `stats` read the store without the router, the providers,
 * scoring or the HTTP server. What a process loaded is recorded by hooks in the child, so
 * the test sees what `node bin/panoptes.cjs` really imports; a chunk of the bundle (dist/cli/)
 * stands for the source modules its source map names. The bundle keeps the start to a few files:
 * Node pays for each file it loads. Where the bundle was never built, the command says how to
 * build it. (How fast it starts is measured by `npm run bench -- startup`, not here.)
 * Runs on: Node (tests).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../core/cli/main.js';
import { BIN, runCli } from '../helpers/cli.js';
import { tempDir, writeManifest, writeMockCatalog } from '../helpers/temp.js';

/**
 * NODE_OPTIONS that append the URL of every module the process loads to `file`: the CommonJS
 * modules (the bundle is CommonJS) from the module cache and the public built-ins (`node:net`)
 * from Node's load list as the process exits, written by a `--require` file beside `file`, and
 * the ES modules as they load, through a loader hook.
 */
function recordLoads(file: string): string {
  const recorder = `${file}.cjs`;
  writeFileSync(
    recorder,
    `const { appendFileSync } = require('node:fs');
const { pathToFileURL } = require('node:url');
process.on('exit', () => {
  const loaded = Object.keys(require.cache).filter((f) => f !== __filename).map((f) => pathToFileURL(f).href);
  const builtins = process.moduleLoadList.filter((m) => /^NativeModule [a-z_]+$/.test(m)).map((m) => 'node:' + m.slice(13));
  appendFileSync(${JSON.stringify(file)}, [...loaded, ...builtins].map((u) => u + '\\n').join(''));
});
`,
  );
  const hook = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(file)}, url + '\\n');
  return next(url, context);
}`;
  const register = `import { register } from 'node:module';
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
  return `--require=${recorder} --import=data:text/javascript,${encodeURIComponent(register)}`;
}

const BUNDLE = resolve('dist', 'cli');

/**
 * What the loaded URLs stand for: a file of the bundle for the sources its map names, any other
 * file for itself (the bundle's entry, a bare re-export, and the bundler's helpers have no map).
 */
function sourcesOf(urls: string[]): string[] {
  return urls.flatMap((url) => {
    if (!url.startsWith('file:')) return [url];
    const file = fileURLToPath(url);
    if (dirname(file) !== BUNDLE || !existsSync(`${file}.map`)) return [file];
    const { sources } = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
    return sources.map((s) => resolve(BUNDLE, s));
  });
}

const ENGINE = [
  /\/node_modules\/fastify\//,
  /\/node_modules\/pino\//,
  /\/node_modules\/openai\//,
  /\/node_modules\/@anthropic-ai\//,
  /\/core\/models\/router\//,
  /\/core\/models\/providers\//,
  /\/core\/scoring\/scorekeeper\.ts$/,
  /\/core\/scheduler\/scheduler\.ts$/,
  /\/core\/service\/engine\.ts$/,
];
const STORE = [/\/node_modules\/better-sqlite3\//, /\/node_modules\/zod\//, /\/core\/store\//];

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

  /** What the command printed, the source modules it loaded, and the files of the bundle that held them. */
  async function loadsOf(args: string[], name: string): Promise<{ stdout: string; loads: string[]; bundleFiles: string[] }> {
    const file = join(tmp.dir, `${name}.loads`);
    const res = await runCli(args, { NODE_OPTIONS: recordLoads(file) });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const urls = [...new Set(readFileSync(file, 'utf8').trim().split('\n'))];
    // Every module of the project comes from the bundle: none from the sources or the per-file build.
    const project = urls.filter((u) => u.startsWith('file:') && !u.includes('/node_modules/') && !u.endsWith('/bin/panoptes.cjs'));
    const bundleFiles = project.filter((u) => dirname(fileURLToPath(u)) === BUNDLE);
    expect(bundleFiles).toEqual(project);
    return { stdout: res.stdout, loads: sourcesOf(urls), bundleFiles };
  }

  it('--help lists every command with its description, and loads neither the engine nor the store', async () => {
    const { stdout, loads, bundleFiles } = await loadsOf(['--help'], 'help');
    // The entry, the chunk of what every start needs (commander included), the bundler's helpers.
    expect(bundleFiles.length).toBeLessThanOrEqual(3);
    expect(loads.some((u) => /\/node_modules\/commander\//.test(u))).toBe(true);
    const commands = buildProgram().commands;
    expect(commands.length).toBeGreaterThanOrEqual(12);
    for (const c of commands) {
      expect(stdout).toMatch(new RegExp(`^  ${c.name()}\\b.*`, 'm'));
      // Commander wraps long descriptions: compare with the whitespace folded.
      expect(stdout.replace(/\s+/g, ' ')).toContain(c.description());
    }
    for (const heavy of [...ENGINE, ...STORE]) expect(loads.filter((u) => heavy.test(u))).toEqual([]);
    // Built-ins only commands that run need (commander's executable subcommands, the desktop launch, TLS).
    expect(loads).toContain('node:fs');
    expect(loads.filter((u) => ['node:child_process', 'node:tls'].includes(u))).toEqual([]);
  });

  it("every command's --help prints its usage and options", async () => {
    for (const c of buildProgram().commands) {
      const res = await runCli([c.name(), '--help']);
      expect(res.code, c.name()).toBe(0);
      expect(res.stdout, c.name()).toContain(`Usage: panoptes ${c.name()}`);
      for (const o of c.options) expect(res.stdout, `${c.name()} ${o.flags}`).toContain(o.long ?? o.flags);
    }
  });

  it('runs and stats read the store without the engine, and validate nothing when every run kept its prices', async () => {
    const runs = await loadsOf(['runs', ...common], 'runs');
    expect(runs.stdout).toMatch(/^run +name +status/);
    expect(runs.stdout).toContain('mock-alpha x1');
    const stats = await loadsOf(['stats', ...common], 'stats');
    expect(stats.stdout).toMatch(/^mock-alpha +3 /m);
    for (const { loads, bundleFiles } of [runs, stats]) {
      // What --help loads, and one chunk more: the store and what the two commands read with.
      expect(bundleFiles.length).toBeLessThanOrEqual(4);
      expect(loads.some((u) => /\/core\/store\/store\.ts$/.test(u))).toBe(true);
      for (const heavy of ENGINE) expect(loads.filter((u) => heavy.test(u))).toEqual([]);
      // Every run here kept its prices: the catalog (and zod with it) is not needed to cost them.
      expect(loads.filter((u) => /\/node_modules\/zod\/|\/core\/models\/catalog\.ts$/.test(u))).toEqual([]);
    }
  });

  it('says how to build it when the bundle is missing, and exits 2', () => {
    const bin = join(tmp.dir, 'unbuilt', 'bin', 'panoptes.cjs');
    mkdirSync(dirname(bin), { recursive: true });
    copyFileSync(BIN, bin);
    const res = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8' });
    expect(res.status).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain('panoptes: not built yet; run `npm install` (or `npm run build`)');
  });

  it('stats of an unknown run is refused by name', async () => {
    const res = await runCli(['stats', '--run', 'r-none', ...common]);
    expect(res.code).toBe(2);
    expect(res.stderr.trim()).toBe('panoptes: no run "r-none"');
  });
});
