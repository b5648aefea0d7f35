/**
 * `GET /runs/:id/inspect.tar`: a run's inspect_ai logs over the HTTP API, one tar archive of the
 * folder `export --format inspect` writes: unpacked, one EvalLog per model sharing the set's id,
 * a sample per (vignette, epoch), and `eval-set.json`; the server's temporary folder is gone once
 * the answer is sent; an unknown run is a 404 before any byte.
 * Runs on: Node (tests).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { x as extractTar } from 'tar';
import { afterEach, describe, expect, it } from 'vitest';
import { writeTargetManifest } from '../helpers/temp.js';
import { send, startApi, TOKEN, waitForRun, type ApiHarness } from './harness.js';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const inspectTemps = () => readdirSync(tmpdir()).filter((n) => n.startsWith('panoptes-inspect-')).sort();

describe('the inspect export over HTTP', () => {
  it('sends the logs as one tar that unpacks into the folder inspect reads', async () => {
    api = await startApi();
    const manifest = writeTargetManifest(api.dir, 6);
    const created = await api.call('POST', '/runs', { body: { manifest, models: ['fast', 'steady'], epochs: 2, scorers: { scorers: [{ name: 'exact', type: 'match' }] } } });
    const runId = created.json.id as string;
    await waitForRun(api, runId);
    await api.engine.scoring.finish(runId);
    const before = inspectTemps();

    const res = await fetch(`${api.url}/runs/${runId}/inspect.tar`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-tar');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${runId}-inspect.tar"`);
    const archive = join(api.dir, 'logs.tar');
    writeFileSync(archive, Buffer.from(await res.arrayBuffer()));
    const out = join(api.dir, 'logs');
    mkdirSync(out);
    await extractTar({ file: archive, cwd: out });
    const files = readdirSync(out).sort();
    expect(files).toHaveLength(3);
    expect(files).toContain('eval-set.json');
    const logs = files.filter((f) => f !== 'eval-set.json').map((f) => JSON.parse(readFileSync(join(out, f), 'utf8')));
    expect(logs.map((l) => l.eval.model).sort()).toEqual(['fast', 'steady']);
    for (const log of logs) {
      expect(log.version).toBe(2);
      expect(log.eval.eval_set_id).toBe(`panoptes-${runId}`);
      expect(log.samples).toHaveLength(12);
    }
    await expect.poll(inspectTemps, { timeout: 5_000 }).toEqual(before);

    const missing = await send(api.port, 'GET', '/runs/r-nope/inspect.tar', { headers: { host: `127.0.0.1:${api.port}`, authorization: `Bearer ${TOKEN}` } });
    expect(missing.status).toBe(404);
  });
});
