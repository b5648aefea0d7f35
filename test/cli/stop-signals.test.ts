/**
 * SIGTERM and SIGHUP (a closed terminal, a supervisor) stop `panoptes run` and `panoptes serve`
 * the way Ctrl-C does: the run in progress goes back to the queue at once, not left `running`
 * until the next start repairs it.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { Store } from '../../core/store/store.js';
import { startCli, waitForStderr } from '../helpers/cli.js';
import { serve, stopStarted } from '../helpers/serve.js';
import { tempDir, writeManifest, writeMockCatalog } from '../helpers/temp.js';
import { send } from '../http/harness.js';

let tmp: ReturnType<typeof tempDir>;
let catalog: string;
let manifest: string;
beforeAll(() => {
  tmp = tempDir();
  catalog = writeMockCatalog(tmp.dir, { slow: { latencyMs: 200 } });
  manifest = writeManifest(tmp.dir, 200);
});
afterEach(stopStarted);
afterAll(() => tmp.cleanup());

function runStatus(dataDir: string, runId: string): string {
  const store = new Store(join(dataDir, 'panoptes.db'), { readonly: true });
  try {
    return store.queries.getRun(runId)!.status;
  } finally {
    store.close();
  }
}

for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
  it(`${signal} stops \`panoptes run\` like Ctrl-C: the run is queued for resume`, async () => {
    const dataDir = join(tmp.dir, `run-${signal}`);
    const cli = startCli(['run', '--manifest', manifest, '--models', 'slow', '--no-progress', '--data-dir', dataDir, '--catalog', catalog]);
    const [, runId] = await waitForStderr(cli, /run (r\w+): 1 jobs/);
    await new Promise((r) => setTimeout(r, 500));
    cli.child.kill(signal);
    const done = await cli.done;
    expect(done.code, done.stderr).toBe(130);
    expect(done.stderr).toContain(`interrupted: run ${runId} is kept`);
    expect(runStatus(dataDir, runId!)).toBe('queued');
  });

  it(`${signal} stops \`panoptes serve\`, handing its running run back to the queue`, async () => {
    const dataDir = join(tmp.dir, `serve-${signal}`);
    const s = await serve(['--data-dir', dataDir, '--manifest-root', tmp.dir, '--catalog', catalog], { PANOPTES_TOKEN: '' });
    const headers = { host: `127.0.0.1:${s.port}`, authorization: `Bearer ${s.tokenLine}` };
    const created = await send(s.port, 'POST', '/runs', { headers, body: JSON.stringify({ manifest, models: ['slow'], epochs: 1 }) });
    expect(created.status, created.text).toBe(201);
    await new Promise((r) => setTimeout(r, 500));
    s.cli.child.kill(signal);
    const done = await s.cli.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toContain(`${signal}: stopping`);
    expect(runStatus(dataDir, created.json.id as string)).toBe('queued');
  });
}
