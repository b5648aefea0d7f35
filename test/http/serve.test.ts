import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../core/store/store.js';
import { runCli, startCli } from '../helpers/cli.js';
import { serve, started, stopStarted } from '../helpers/serve.js';
import { tempDir, writeManifest, writeMockCatalog } from '../helpers/temp.js';
import { send } from './harness.js';

describe('panoptes serve', () => {
  let tmp: ReturnType<typeof tempDir>;
  let catalog: string;
  beforeAll(() => {
    tmp = tempDir();
    catalog = writeMockCatalog(tmp.dir, { quick: { latencyMs: 1 }, slow: { latencyMs: 200 } });
  });
  afterEach(stopStarted);
  afterAll(() => tmp.cleanup());

  it('generates and prints a token when given none, serves the API, runs what is posted, and stops on SIGTERM', async () => {
    const dataDir = join(tmp.dir, 'gen');
    const env = { PANOPTES_TOKEN: '' };
    const s = await serve(['--data-dir', dataDir, '--manifest-root', tmp.dir, '--catalog', catalog], env);
    const token = s.tokenLine;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const headers = { host: `127.0.0.1:${s.port}`, authorization: `Bearer ${token}` };

    expect((await send(s.port, 'GET', '/health', { headers: { host: headers.host } })).status).toBe(200);
    expect((await send(s.port, 'GET', '/stats', { headers: { host: headers.host } })).status).toBe(401);

    const manifest = writeManifest(tmp.dir, 10, 'serve.jsonl');
    const created = await send(s.port, 'POST', '/runs', { headers, body: JSON.stringify({ manifest, models: ['quick'], epochs: 2 }) });
    expect(created.status).toBe(201);
    let status = '';
    for (let i = 0; i < 400 && status !== 'done'; i++) {
      status = (await send(s.port, 'GET', `/runs/${created.json.id}`, { headers })).json.run.status;
      if (status !== 'done') await new Promise((r) => setTimeout(r, 25));
    }
    expect(status).toBe('done');
    const stats = await send(s.port, 'GET', '/stats', { headers });
    expect(stats.json.models).toEqual([expect.objectContaining({ model: 'quick', calls: 20 })]);

    s.cli.child.kill('SIGTERM');
    const res = await s.cli.done;
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/SIGTERM: stopping/);
  });

  it('with --ui prints the app address without a token the user gave (--token or PANOPTES_TOKEN), and with a generated one', async () => {
    const given = 'a-token-the-user-chose-for-the-ui';
    const waitForApp = async (s: Awaited<ReturnType<typeof serve>>) => {
      while (!/the app is at /.test(s.stdout())) await new Promise((r) => setTimeout(r, 20));
      return /the app is at (\S+)/.exec(s.stdout())![1]!;
    };
    const flag = await serve(['--ui', '--data-dir', join(tmp.dir, 'ui-flag'), '--catalog', catalog, '--token', given], { PANOPTES_TOKEN: '' });
    expect(await waitForApp(flag)).toBe(`${flag.url}/#token=<the`);
    expect(flag.stdout()).toContain(`${flag.url}/#token=<the token from --token>`);
    expect(flag.stdout()).not.toContain(given);
    const env = await serve(['--ui', '--data-dir', join(tmp.dir, 'ui-env'), '--catalog', catalog], { PANOPTES_TOKEN: given });
    await waitForApp(env);
    expect(env.stdout()).toContain(`${env.url}/#token=<the token from PANOPTES_TOKEN>`);
    expect(env.stdout()).not.toContain(given);
    const generated = await serve(['--ui', '--data-dir', join(tmp.dir, 'ui-gen'), '--catalog', catalog], { PANOPTES_TOKEN: '' });
    expect(await waitForApp(generated)).toBe(`${generated.url}/#token=${generated.tokenLine}`);
    for (const s of [flag, env, generated]) {
      s.cli.child.kill('SIGTERM');
      expect((await s.cli.done).code).toBe(0);
    }
  });

  it('takes the token from PANOPTES_TOKEN without echoing it, and refuses a short one', async () => {
    const dataDir = join(tmp.dir, 'env');
    const token = 'an-environment-token-of-decent-length';
    const s = await serve(['--data-dir', dataDir, '--manifest-root', tmp.dir, '--catalog', catalog], { PANOPTES_TOKEN: token });
    expect(s.tokenLine).toBe('(from PANOPTES_TOKEN)');
    expect(s.stdout()).not.toContain(token);
    const ok = await send(s.port, 'GET', '/stats', { headers: { host: `127.0.0.1:${s.port}`, authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    s.cli.child.kill('SIGINT');
    expect((await s.cli.done).code).toBe(0);

    const short = await runCli(['serve', '--port', '0', '--data-dir', dataDir, '--token', 'tooshort']);
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/--token: a token needs at least 16 characters/);
  });

  it('hands a run in progress back to the queue on SIGINT, so the next start finishes it', async () => {
    const dataDir = join(tmp.dir, 'interrupt');
    const token = 'interrupt-test-token-0123456789';
    const s = await serve(['--data-dir', dataDir, '--manifest-root', tmp.dir, '--catalog', catalog, '--token', token]);
    const headers = { host: `127.0.0.1:${s.port}`, authorization: `Bearer ${token}` };
    const manifest = writeManifest(tmp.dir, 40, 'slow.jsonl');
    const created = await send(s.port, 'POST', '/runs', { headers, body: JSON.stringify({ manifest, models: ['slow'], epochs: 1 }) });
    let run = created.json;
    for (let i = 0; i < 200 && run.status !== 'running'; i++) {
      await new Promise((r) => setTimeout(r, 25));
      run = (await send(s.port, 'GET', `/runs/${created.json.id}`, { headers })).json.run;
    }
    expect(run.status).toBe('running');
    s.cli.child.kill('SIGINT');
    expect((await s.cli.done).code).toBe(0);

    const store = new Store(join(dataDir, 'panoptes.db'));
    try {
      expect(store.queries.getRun(created.json.id)?.status).toBe('queued');
    } finally {
      store.close();
    }

    const again = await serve(['--data-dir', dataDir, '--manifest-root', tmp.dir, '--catalog', catalog, '--token', token]);
    const againHeaders = { host: `127.0.0.1:${again.port}`, authorization: `Bearer ${token}` };
    for (let i = 0; i < 400 && run.status !== 'done'; i++) {
      await new Promise((r) => setTimeout(r, 25));
      run = (await send(again.port, 'GET', `/runs/${created.json.id}`, { headers: againHeaders })).json.run;
    }
    expect(run).toMatchObject({ status: 'done', calls: 40 });
    again.cli.child.kill('SIGTERM');
    expect((await again.cli.done).code).toBe(0);
  });
  it('--worker-port accepts `panoptes worker` processes, which run the jobs this process cannot', async () => {
    const dataDir = join(tmp.dir, 'workers');
    // The coordinator knows `far` only as a hosted model without a key: only a worker can run it.
    const coordinatorCatalog = join(tmp.dir, 'coordinator.json');
    writeFileSync(
      coordinatorCatalog,
      JSON.stringify({
        providers: { far: { kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: 'PANOPTES_TEST_NO_SUCH_KEY', trainsOnData: false } },
        models: { far: { hosts: [{ provider: 'far', model: 'far', contextWindow: 8000 }] } },
      }),
    );
    const workerCatalog = writeMockCatalog(tmp.dir, { far: { latencyMs: 1 } }, 'worker.json');
    const s = await serve(['--data-dir', dataDir, '--manifest-root', tmp.dir, '--catalog', coordinatorCatalog, '--worker-port', '0', '--worker-token', 'worker-secret-0123456789'], { PANOPTES_TOKEN: '' });
    let listening: RegExpExecArray | null = null;
    for (let i = 0; i < 200 && !listening; i++) {
      listening = /listening for workers on 127\.0\.0\.1:(\d+)/.exec(s.stdout());
      if (!listening) await new Promise((r) => setTimeout(r, 25));
    }
    expect(listening).not.toBeNull();
    const worker = startCli(['worker', '--connect', `127.0.0.1:${listening![1]}`, '--token', 'worker-secret-0123456789', '--id', 'far-box', '--catalog', workerCatalog]);
    started.push(worker);

    const headers = { host: `127.0.0.1:${s.port}`, authorization: `Bearer ${s.tokenLine}` };
    const manifest = writeManifest(tmp.dir, 8, 'far.jsonl');
    const created = await send(s.port, 'POST', '/runs', { headers, body: JSON.stringify({ manifest, models: ['far'], epochs: 2 }) });
    expect(created.status).toBe(201);
    let detail: { run: { status: string }; jobs: Array<{ workerId: string }> } = { run: { status: '' }, jobs: [] };
    for (let i = 0; i < 600 && detail.run.status !== 'done' && detail.run.status !== 'failed'; i++) {
      detail = (await send(s.port, 'GET', `/runs/${created.json.id}`, { headers })).json;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(detail.run.status).toBe('done');
    expect(detail.jobs.map((j) => j.workerId)).toEqual(['far-box', 'far-box']);
  });

  it('--worker-port without a worker token refuses to start', async () => {
    const res = await runCli(['serve', '--port', '0', '--worker-port', '0', '--data-dir', join(tmp.dir, 'nt'), '--catalog', catalog], { PANOPTES_WORKER_TOKEN: '' });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--worker-port needs a worker token');
  });
});
