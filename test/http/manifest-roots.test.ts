/**
 * Manifests over HTTP come only from where the user put them: the data folder's `manifests/` and
 * the folders the server was given. `POST /runs` and the bridge's `createRun` and `checkManifest`
 * refuse any other path before reading a byte of it — `/etc/passwd`, a file in another folder, a
 * symlink inside `manifests/` that points outside (to a file or through a linked folder), a path
 * that does not exist outside — with one answer that names the allowed folders and echoes nothing
 * of the file. Real files, real symlinks, the real server on 127.0.0.1.
 * Runs on: Node (tests).
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserBridge, bridgeSources } from '../../core/http/bridge.js';
import { ManifestRoots } from '../../core/http/manifest-roots.js';
import type { Engine } from '../../core/service/engine.js';
import { initTelemetry } from '../../core/telemetry.js';
import { tempDir, writeManifest } from '../helpers/temp.js';
import { TOKEN, startApi, type ApiHarness, type HttpAnswer } from './harness.js';

initTelemetry({ defaultLevel: 'silent' });

const SECRET = 'do-not-echo-this-secret-line';

describe('where manifests are read from over HTTP', () => {
  let api: ApiHarness;
  let outside: ReturnType<typeof tempDir>;
  let givenDir: ReturnType<typeof tempDir>;
  let engine: Engine;
  let given: string;
  let manifests: string;

  beforeAll(async () => {
    outside = tempDir('panoptes-outside-');
    givenDir = tempDir('panoptes-given-');
    given = givenDir.dir;
    // The data folder's manifests/ and one folder given to the server (--manifest-root).
    api = await startApi({
      startScheduler: false,
      http: { manifestRoots: [given] },
      addons: async (app, at) => {
        await app.register(browserBridge, { ...bridgeSources(at.engine), token: TOKEN, manifestRoots: ManifestRoots.of(at.dataDir, [given]) });
      },
    });
    engine = api.engine;
    manifests = join(api.dataDir, 'manifests');
    mkdirSync(manifests, { recursive: true });
    // A file that is valid JSON on no line: an error naming each line would echo its start.
    writeFileSync(join(outside.dir, 'secret.jsonl'), `${SECRET}\n${SECRET}-2\n`);
    writeManifest(outside.dir, 3, 'valid-outside.jsonl');
    writeManifest(manifests, 3, 'inside.jsonl');
    writeManifest(given, 3, 'given.jsonl');
    symlinkSync(join(outside.dir, 'secret.jsonl'), join(manifests, 'link-out.jsonl'));
    symlinkSync(join(outside.dir, 'valid-outside.jsonl'), join(manifests, 'link-valid-out.jsonl'));
    symlinkSync(outside.dir, join(manifests, 'linked-folder'));
    symlinkSync(join(manifests, 'inside.jsonl'), join(manifests, 'link-in.jsonl'));
  });
  afterAll(async () => {
    await api.close();
    outside.cleanup();
    givenDir.cleanup();
  });

  const post = (path: string, body: unknown): Promise<HttpAnswer> => api.call('POST', path, { body });
  const createRun = (manifest: string) => post('/runs', { manifest, models: ['fast'], epochs: 1 });

  const expectRefused = (res: HttpAnswer, asked: string) => {
    expect(res.status).toBe(400);
    expect(res.text).not.toContain(SECRET);
    expect(res.text).not.toContain('root:');
    const error = (res.json.error ?? res.json) as { code: string; message: string };
    expect(error.code).toBe('invalid_input');
    expect(error.message).toContain(`${asked} is outside the folders manifests are read from over this server: ${manifests}`);
    expect(error.message).toContain(given);
  };

  const OUTSIDE = () => [
    ['/etc/passwd', '/etc/passwd'],
    ['a file in another folder', join(outside.dir, 'secret.jsonl')],
    ['a valid manifest in another folder', join(outside.dir, 'valid-outside.jsonl')],
    ['a symlink in manifests/ to a file outside', join(manifests, 'link-out.jsonl')],
    ['a symlink in manifests/ to a valid manifest outside', join(manifests, 'link-valid-out.jsonl')],
    ['a file through a symlinked folder in manifests/', join(manifests, 'linked-folder', 'secret.jsonl')],
    ['a missing file outside', join(outside.dir, 'no-such.jsonl')],
    ['a climb out of manifests/', join(manifests, '..', '..', '..', 'etc', 'passwd')],
  ];

  it('refuses every path outside over POST /runs, naming the allowed folders, echoing nothing', async () => {
    for (const [, path] of OUTSIDE()) expectRefused(await createRun(path!), path!);
    expect(engine.store.queries.listRuns({})).toHaveLength(0);
  });

  it("refuses them over the bridge's createRun and checkManifest too", async () => {
    for (const [, path] of OUTSIDE()) {
      expectRefused(await post('/bridge/call/createRun', { manifestPath: path, models: ['fast'], epochs: 1 }), path!);
      expectRefused(await post('/bridge/call/checkManifest', { path }), path!);
    }
    expect(engine.store.queries.listRuns({})).toHaveLength(0);
  });

  it('reads manifests in manifests/ (through a symlink that stays inside too) and in a --manifest-root folder', async () => {
    for (const path of [join(manifests, 'inside.jsonl'), join(manifests, 'link-in.jsonl'), join(given, 'given.jsonl')]) {
      const created = await createRun(path);
      expect(created.status, created.text).toBe(201);
      const checked = await post('/bridge/call/checkManifest', { path });
      expect(checked.json).toMatchObject({ ok: true, value: { count: 3 } });
    }
    // The run keeps the real path it read.
    expect(engine.store.queries.listRuns({}).map((r) => r.manifestPath)).toContain(join(manifests, 'inside.jsonl'));
    const missing = await createRun(join(manifests, 'gone.jsonl'));
    expect(missing.status).toBe(400);
    expect(missing.json.error.message).toBe(`cannot read manifest ${join(manifests, 'gone.jsonl')}: no such file`);
  });
});
