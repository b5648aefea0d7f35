/**
 * A re-run answered from the prompt cache reports what it reused: the CLI's table and --json, the
 * per-run HTTP stats and the service all count the cached calls, the tokens those answers carry and
 * the cost they saved, while `stats --json` keeps exactly the /stats shape. A run with the cache
 * turned off (--skip-prompt-cache) reuses nothing. Costs read the same in the CLI and the app.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd as cliUsd } from '../../core/cli/common.js';
import { createHttpServer } from '../../core/http/api.js';
import { openEngine } from '../../core/service/engine.js';
import { formatUsd as appUsd } from '../../renderer/src/format.js';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeManifest, writeMockCatalog } from '../helpers/temp.js';

const TOKEN = 'cache-accounting-token-0123';

interface ModelJson {
  model: string;
  calls: number;
  input_tokens: number;
  output_tokens: number;
  cached_calls: number;
  cached_input_tokens: number;
  cached_output_tokens: number;
  saved_cost_usd: number;
  est_cost_usd: number;
}

describe('cached calls are counted as what they are', () => {
  let tmp: ReturnType<typeof tempDir>;
  let common: string[];
  let runArgs: string[];
  beforeAll(() => {
    tmp = tempDir();
    const catalog = writeMockCatalog(tmp.dir, { a: { latencyMs: 0 }, b: { latencyMs: 0 } });
    common = ['--data-dir', join(tmp.dir, 'data'), '--catalog', catalog];
    runArgs = ['run', '--manifest', writeManifest(tmp.dir, 10), '--models', 'a,b', '--epochs', '2', ...common];
  });
  afterAll(() => tmp.cleanup());

  it('a first run bills every call; the re-run is answered from the cache, and says so', async () => {
    const first = JSON.parse((await runCli([...runArgs, '--json'])).stdout) as { models: ModelJson[]; cached_calls: number };
    expect(first.cached_calls).toBe(0);
    expect(first.models.every((m) => m.calls === 20 && m.cached_calls === 0 && m.input_tokens > 0)).toBe(true);

    const again = await runCli([...runArgs, '--json']);
    expect(again.code).toBe(0);
    const second = JSON.parse(again.stdout) as { run_id: string; models: ModelJson[]; cached_calls: number; saved_cost_usd: number };
    expect(second.cached_calls).toBe(40);
    for (const m of second.models) {
      const before = first.models.find((f) => f.model === m.model)!;
      expect(m).toMatchObject({ calls: 20, cached_calls: 20, input_tokens: 0, output_tokens: 0, est_cost_usd: 0 });
      // The answers carry the tokens the first run paid for, and the saving is what it paid.
      expect(m.cached_input_tokens).toBe(before.input_tokens);
      expect(m.cached_output_tokens).toBe(before.output_tokens);
      expect(m.saved_cost_usd).toBeCloseTo(before.est_cost_usd, 10);
    }

    // The table for people shows the cache columns.
    const table = await runCli(['stats', '--run', second.run_id, ...common]);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/from cache\s+cached tokens\s+saved$/);
    expect(rows.find((r) => r.startsWith('total'))).toMatch(/^total\s+40\s+0\s+0\s+\$0\.00\s+40\s/);

    // `stats --json` is the /stats shape, nothing more.
    const shape = JSON.parse((await runCli(['stats', '--json', ...common])).stdout) as { models: Array<Record<string, unknown>> };
    expect(Object.keys(shape).sort()).toEqual(['models', 'total_est_cost_usd']);
    expect(Object.keys(shape.models[0]!).sort()).toEqual(['calls', 'est_cost_usd', 'input_tokens', 'model', 'output_tokens']);

    // /runs/:id/stats carries the same cached counts.
    const engine = openEngine({ dataDir: join(tmp.dir, 'data'), catalogPaths: [common[3]!] });
    const app = createHttpServer(engine, { token: TOKEN });
    try {
      const res = await app.inject({ method: 'GET', url: `/runs/${second.run_id}/stats`, headers: { authorization: `Bearer ${TOKEN}` } });
      const body = res.json<{ cached_calls: number; models: ModelJson[] }>();
      expect(body.cached_calls).toBe(40);
      expect(body.models.map((m) => m.cached_calls)).toEqual([20, 20]);
      const all = await app.inject({ method: 'GET', url: '/stats', headers: { authorization: `Bearer ${TOKEN}` } });
      expect(Object.keys(all.json<{ models: object[] }>().models[0]!).sort()).toEqual(['calls', 'est_cost_usd', 'input_tokens', 'model', 'output_tokens']);
    } finally {
      await app.close();
      await engine.close();
    }
  });

  it('--skip-prompt-cache asks the cache nothing: every call is billed', async () => {
    const res = JSON.parse((await runCli([...runArgs, '--skip-prompt-cache', '--json'])).stdout) as { models: ModelJson[]; cached_calls: number };
    expect(res.cached_calls).toBe(0);
    expect(res.models.every((m) => m.input_tokens > 0)).toBe(true);
  });

  it('costs round the same way in the CLI and the app', () => {
    for (const n of [0, 0.00004, 0.0049, 0.005, 0.00999, 0.01, 0.123456, 0.995, 0.999, 1, 1.005, 12.3456, 1234.5]) {
      expect(cliUsd(n)).toBe(appUsd(n));
    }
  });
});
