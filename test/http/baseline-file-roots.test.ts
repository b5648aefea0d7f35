/**
 * A pairwise judge's baseline file over HTTP comes only from where manifests do: `POST /runs`,
 * `POST /runs/:id/score` and the bridge's `createRun` and `scoreRun` refuse a `baselineFile`
 * outside the data folder's `manifests/` and the given folders (`/etc/passwd`, a file elsewhere, a
 * symlink inside that points out), naming `scorers.N.baselineFile` and echoing nothing of the
 * file, and attach nothing; one inside is read and judged. Real files, the real server on 127.0.0.1.
 * Runs on: Node (tests).
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserBridge, bridgeSources } from '../../core/http/bridge.js';
import { ManifestRoots } from '../../core/http/manifest-roots.js';
import type { Engine } from '../../core/service/engine.js';
import { initTelemetry } from '../../core/telemetry.js';
import { tempDir, writeTargetManifest } from '../helpers/temp.js';
import { TOKEN, startApi, type ApiHarness, type HttpAnswer } from './harness.js';

initTelemetry({ defaultLevel: 'silent' });

const SECRET = 'do-not-echo-this-secret-line';

describe('where baseline files are read from over HTTP', () => {
  let api: ApiHarness;
  let outside: ReturnType<typeof tempDir>;
  let engine: Engine;
  let manifests: string;
  let runId: string;

  beforeAll(async () => {
    outside = tempDir('panoptes-outside-');
    // No folder but the data folder's manifests/: the bridge and the API read from there alone.
    api = await startApi({
      startScheduler: false,
      http: { manifestRoots: [] },
      addons: async (app, at) => {
        await app.register(browserBridge, { ...bridgeSources(at.engine), token: TOKEN, manifestRoots: ManifestRoots.of(at.dataDir) });
      },
    });
    engine = api.engine;
    manifests = join(api.dataDir, 'manifests');
    mkdirSync(manifests, { recursive: true });
    writeFileSync(join(outside.dir, 'secret.jsonl'), `${SECRET}\n`);
    symlinkSync(join(outside.dir, 'secret.jsonl'), join(manifests, 'link-out.jsonl'));
    writeFileSync(join(manifests, 'answers.jsonl'), ['q0', 'q1', 'q2'].map((id) => JSON.stringify({ id, response: 'Z' })).join('\n'));
    writeTargetManifest(manifests, 3);
    const run = await engine.service.createRun({ manifestPath: join(manifests, 'targets.jsonl'), models: ['mock-strong'], epochs: 1 });
    await engine.scheduler.runToCompletion(run.id);
    runId = run.id;
  });
  afterAll(async () => {
    await api.close();
    outside.cleanup();
  });

  const post = (path: string, body: unknown): Promise<HttpAnswer> => api.call('POST', path, { body });
  const scorers = (baselineFile: string) => ({
    scorers: [{ name: 'exact', type: 'match' }, { name: 'vs-file', type: 'judge', mode: 'pairwise', baselineFile, judges: ['mock-judge'], rubric: 'Which is right?' }],
  });

  it('refuses a baseline file outside, over every route, naming the field and echoing nothing', async () => {
    const paths = ['/etc/passwd', join(outside.dir, 'secret.jsonl'), join(manifests, 'link-out.jsonl'), join(manifests, '..', '..', '..', 'etc', 'passwd')];
    for (const path of paths) {
      const answers = [
        await post('/runs', { manifest: join(manifests, 'targets.jsonl'), models: ['mock-strong'], epochs: 1, ...{ scorers: scorers(path) } }),
        await post(`/runs/${runId}/score`, { scorers: scorers(path) }),
        await post('/bridge/call/createRun', { manifestPath: join(manifests, 'targets.jsonl'), models: ['mock-strong'], epochs: 1, scorers: scorers(path) }),
        await post('/bridge/call/scoreRun', { runId, scorers: scorers(path) }),
      ];
      for (const res of answers) {
        expect(res.status, res.text).toBe(400);
        expect(res.text).not.toContain(SECRET);
        expect(res.text).not.toContain('root:');
        const error = (res.json.error ?? res.json) as { code: string; message: string; where?: string };
        expect(error.message).toContain('is outside the folders data files are read from over this server');
        expect(res.text).toContain('scorers.1.baselineFile');
      }
    }
    expect(engine.store.queries.listRuns({})).toHaveLength(1);
    expect((await engine.service.scoringStatus({ runId })).scorers).toEqual([]);
  });

  it('reads and judges against a baseline file in manifests/', async () => {
    const res = await post(`/runs/${runId}/score`, { scorers: scorers(join(manifests, 'answers.jsonl')) });
    expect(res.status, res.text).toBe(202);
    engine.scoring.start();
    await engine.scoring.finish(runId);
    expect((await engine.service.scoringStatus({ runId })).scorers.map((s) => [s.name, s.done, s.failed])).toEqual([
      ['exact', 3, 0],
      ['vs-file', 3, 0],
    ]);
  });
});
