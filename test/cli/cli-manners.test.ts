/**
 * The CLI as a person meets it: an unknown model gets the nearest ids, not the catalog; `runs` has
 * a header and says why a run failed; a manifest's errors are listed (the first 20, then a count);
 * a port in use is one line, not a stack; exports and responses.jsonl are one line shape carrying
 * the vignette's target and metadata; `panoptes desktop` (npm start) where Electron cannot start
 * prints the app's address once, logs nothing per request, and comes back on the same port with
 * the same token for the same data folder.
 * Runs on: Node (tests).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { responsesPath } from '../../core/paths.js';
import { runCli, startCli } from '../helpers/cli.js';
import { tempDir, writeMockCatalog } from '../helpers/temp.js';

describe('the CLI speaks plainly', () => {
  let tmp: ReturnType<typeof tempDir>;
  let common: string[];
  let manifest: string;
  beforeAll(() => {
    tmp = tempDir();
    const catalog = writeMockCatalog(tmp.dir, { 'mock-alpha': { latencyMs: 0 }, 'mock-beta': { latencyMs: 0 }, broken: { errorRate: 1, errorKind: 'auth' } });
    common = ['--data-dir', join(tmp.dir, 'data'), '--catalog', catalog];
    manifest = join(tmp.dir, 'm.jsonl');
    writeFileSync(
      manifest,
      [
        JSON.stringify({ id: 'a', prompt: 'one', target: 'A', metadata: { topic: 'math', level: 2 } }),
        JSON.stringify({ id: 'b', prompt: 'two' }),
      ].join('\n') + '\n',
    );
  });
  afterAll(() => tmp.cleanup());

  it('suggests the nearest model ids for an unknown one', async () => {
    const res = await runCli(['run', '--manifest', manifest, '--models', 'mock-alpah', ...common]);
    expect(res.code).toBe(2);
    expect(res.stderr.trim()).toBe('panoptes: models[0]: unknown model "mock-alpah"; did you mean "mock-alpha"?');
  });

  it('lists the first 20 manifest errors and counts the rest', async () => {
    const bad = join(tmp.dir, 'bad.jsonl');
    writeFileSync(bad, Array.from({ length: 25 }, (_, i) => `{"id": "x${i}"}`).join('\n') + '\n');
    const res = await runCli(['run', '--manifest', bad, '--models', 'mock-alpha', ...common]);
    expect(res.code).toBe(2);
    const listed = res.stderr.split('\n').filter((l) => l.startsWith(`${bad}:`));
    expect(listed).toHaveLength(20);
    expect(listed[19]).toMatch(new RegExp(`^${bad}:20: `));
    expect(res.stderr).toContain('(5 more issues; 25 in all)');
  });

  it('exports and responses.jsonl carry one line shape, with the vignette target and metadata', async () => {
    const run = JSON.parse((await runCli(['run', '--manifest', manifest, '--models', 'mock-alpha', '--json', ...common])).stdout) as { run_id: string };
    const log = readFileSync(responsesPath(join(tmp.dir, 'data'), run.run_id), 'utf8');
    const out = join(tmp.dir, 'export.jsonl');
    expect((await runCli(['export', run.run_id, '--out', out, ...common])).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(log);
    const [a, b] = log.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(a).toMatchObject({ vignette_id: 'a', target: 'A', metadata: { topic: 'math', level: 2 } });
    expect(b).not.toHaveProperty('metadata');
    expect(b).not.toHaveProperty('target');
    const csv = join(tmp.dir, 'export.csv');
    await runCli(['export', run.run_id, '--out', csv, '--format', 'csv', ...common]);
    // metadata, then the later columns: messages (a single-turn vignette has none), system (none), est_cost_usd.
    expect(readFileSync(csv, 'utf8').split('\n')[1]).toMatch(/,"\{""topic"":""math"",""level"":2\}",,,[0-9.e-]+$/);
  });

  it('runs: a header, and why a run failed', async () => {
    await runCli(['run', '--manifest', manifest, '--models', 'broken', ...common]);
    const res = await runCli(['runs', ...common]);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^run\s+name\s+status\s+jobs\s+calls\s+models x epochs\s+est\. cost\s+with scoring\s+from cache\s+created$/);
    const failed = lines.findIndex((l) => /\sfailed\s/.test(l) && l.includes('broken x1'));
    expect(failed).toBeGreaterThan(0);
    expect(lines[failed + 1]).toMatch(/^ {2}reason: 1 of 1 jobs failed: broken@1: /);
  });

  it('a port in use is one line', async () => {
    const holder: Server = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as { port: number }).port;
    try {
      const res = await runCli(['serve', '--port', String(port), ...common], { PANOPTES_TOKEN: '' });
      expect(res.code).toBe(2);
      expect(res.stderr).toBe(`panoptes: 127.0.0.1:${port} is already in use: choose another --port (0: any free port)\n`);
    } finally {
      holder.close();
    }
  });

  it('desktop (npm start) without Electron: one address, no request logs, the same port and token next time', async () => {
    const start = async () => {
      const cli = startCli(['desktop', ...common], { PANOPTES_TOKEN: '', PANOPTES_LOG: '', DISPLAY: '', WAYLAND_DISPLAY: '' });
      let stdout = '';
      cli.child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const deadline = Date.now() + 20_000;
      for (;;) {
        const m = /the app is at (http:\/\/127\.0\.0\.1:(\d+))\/#token=(\S+)/.exec(stdout);
        if (m) return { cli, url: m[1]!, port: Number(m[2]), token: decodeURIComponent(m[3]!), stdout: () => stdout };
        if (Date.now() > deadline || cli.child.exitCode !== null) throw new Error(`desktop did not start:\n${stdout}\n${cli.stderr()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const first = await start();
    const res = await fetch(`${first.url}/stats`, { headers: { authorization: `Bearer ${first.token}` } });
    expect(res.status).toBe(200);
    first.cli.child.kill('SIGTERM');
    const done = await first.cli.done;
    // One line for why the browser, one for the address; the token is not printed again, no request was logged.
    expect(done.stdout.trimEnd().split('\n')).toHaveLength(2);
    expect(done.stderr).not.toMatch(/"req"|incoming request|request completed/);

    const second = await start();
    try {
      expect(second.port).toBe(first.port);
      expect(second.token).toBe(first.token);
    } finally {
      second.cli.child.kill('SIGTERM');
      await second.cli.done;
    }
    // A corrupt saved state is replaced, not trusted.
    writeFileSync(join(tmp.dir, 'data', 'ui.json'), '{"port": "x"');
    const third = await start();
    try {
      expect(third.token).not.toBe(first.token);
    } finally {
      third.cli.child.kill('SIGTERM');
      await third.cli.done;
    }
  });
});
