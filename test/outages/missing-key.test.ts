/**
 * A model whose key is not set: the run fails saying the key first ("needs an API key: set X"),
 * then that no worker serves it, through the real `panoptes run` process and over the HTTP API.
 * Runs on: Node (tests).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../remote/harness.js';
import { runCli } from '../helpers/cli.js';
import { tempDir, writeManifest } from '../helpers/temp.js';
import { startApi, waitForRun, type ApiHarness } from '../http/harness.js';

const KEY = 'PANOPTES_TEST_UNSET_KEY';
const SAYS = `model "keyed-1" needs an API key: set ${KEY} (no live worker serves it either)`;

describe('a missing API key is named first', () => {
  const tmp = tempDir();
  const catalog = join(tmp.dir, 'keyed.json');
  const manifest = writeManifest(tmp.dir, 3);
  let api: ApiHarness | undefined;

  beforeAll(() => {
    assertBuilt();
    delete process.env[KEY];
    writeFileSync(
      catalog,
      JSON.stringify({
        providers: { keyed: { kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: KEY, trainsOnData: false } },
        models: { 'keyed-1': { hosts: [{ provider: 'keyed', model: 'keyed-1', contextWindow: 8000 }] } },
      }),
    );
  });
  afterAll(async () => {
    await api?.close();
    tmp.cleanup();
  });

  it('by `panoptes run`', async () => {
    const res = await runCli(['run', '--data-dir', join(tmp.dir, 'cli-data'), '--catalog', catalog, '--manifest', manifest, '--models', 'keyed-1', '--no-progress']);
    expect(res.code).toBe(1);
    expect(res.stdout.split('\n').find((l) => l.startsWith('reason: '))).toBe(`reason: 1 of 1 jobs failed: keyed-1@1: ${SAYS}`);
    expect(res.stdout + res.stderr).not.toContain('no live worker serves model');
  });

  it('over HTTP', async () => {
    api = await startApi({ engine: { catalogPaths: [catalog] }, http: { manifestRoots: [tmp.dir] } });
    const created = await api.call('POST', '/runs', { body: { manifest, models: ['keyed-1'], epochs: 1 } });
    expect(created.status, created.text).toBe(201);
    const detail = await waitForRun(api, created.json.id);
    expect(detail.json.run.status).toBe('failed');
    expect(detail.json.run.error).toBe(`1 of 1 jobs failed: keyed-1@1: ${SAYS}`);
    expect(detail.json.jobs[0].error).toBe(SAYS);
  });
});
