/**
 * `POST /packs` over the real server: a repository under a manifest root is packed and its
 * manifest goes straight into `POST /runs`; a folder or a tarball outside the roots, a symlink in a
 * root that points outside, and a FIFO are refused naming `source` before anything is read, with
 * nothing kept; `POST /packs/:id/cancel` answers whether such a pack was in flight.
 * Runs on: Node (tests).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initTelemetry } from '../../core/telemetry.js';
import { tempDir } from '../helpers/temp.js';
import { startApi, waitForRun, type ApiHarness } from './harness.js';

initTelemetry({ defaultLevel: 'silent' });

function makeRepo(root: string): void {
  mkdirSync(join(root, 'src'), { recursive: true });
  writeFileSync(join(root, 'src', 'main.ts'), 'export const answer = 42;\n');
  writeFileSync(join(root, 'README.md'), '# demo\n');
}

describe('POST /packs', () => {
  let api: ApiHarness;
  let outside: ReturnType<typeof tempDir>;

  beforeAll(async () => {
    api = await startApi();
    outside = tempDir('panoptes-outside-');
    makeRepo(join(api.dir, 'repo'));
    makeRepo(join(outside.dir, 'repo'));
    writeFileSync(join(outside.dir, 'repo.tar.gz'), Buffer.from([0x1f, 0x8b, 0, 0]));
    symlinkSync(join(outside.dir, 'repo'), join(api.dir, 'linked-out'));
    execFileSync('mkfifo', [join(api.dir, 'pipe.tar.gz')]);
  });
  afterAll(async () => {
    await api?.close();
    outside?.cleanup();
  });

  const kept = () => (existsSync(join(api.dataDir, 'manifests')) ? readdirSync(join(api.dataDir, 'manifests')) : []);

  it('packs a folder under a root, and the manifest it keeps starts a run', async () => {
    const res = await api.call('POST', '/packs', { body: { source: join(api.dir, 'repo'), models: ['fast', 'steady'], instruction: 'Review it.' } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ repository: 'repo', source: 'folder', window: 100_000, vignettes: [{ id: 'repo', coverage: { files: 2, totalFiles: 2 } }] });
    const run = await api.call('POST', '/runs', { body: { manifest: res.json.manifestPath, models: ['fast'], epochs: 1 } });
    expect(run.status).toBe(201);
    expect((await waitForRun(api, run.json.id)).json.run.status).toBe('done');
  });

  it('refuses sources outside the roots, a link out of a root and a FIFO, naming source and keeping nothing', async () => {
    const before = kept();
    for (const source of [join(outside.dir, 'repo'), join(outside.dir, 'repo.tar.gz'), join(api.dir, 'linked-out'), '/etc']) {
      const res = await api.call('POST', '/packs', { body: { source, models: ['fast'] } });
      expect(res.status).toBe(400);
      expect(res.json.error.where).toBe('source');
      expect(res.json.error.message).toMatch(/is outside the folders data files are read from over this server: .*put the repository there or start the server with --manifest-root/);
    }
    const fifo = await api.call('POST', '/packs', { body: { source: join(api.dir, 'pipe.tar.gz'), models: ['fast'] } });
    expect(fifo.status).toBe(400);
    expect(fifo.json.error).toMatchObject({ where: 'source', message: expect.stringMatching(/not a regular file/) });
    const field = await api.call('POST', '/packs', { body: { source: join(api.dir, 'repo'), models: ['fast'], diff: 'main' } });
    expect([field.status, field.json.error.where]).toEqual([400, 'diff']);
    expect(kept()).toEqual(before);
  });

  it('cancels by id: false when no such pack is in flight', async () => {
    const res = await api.call('POST', '/packs/nothing-here/cancel');
    expect([res.status, res.json]).toEqual([200, { cancelled: false }]);
    const bad = await api.call('POST', '/packs/no%20spaces/cancel');
    expect([bad.status, bad.json.error.where]).toEqual([400, 'packId']);
  });
});
