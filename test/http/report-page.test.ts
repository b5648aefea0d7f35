/**
 * `GET /runs/:id/report.html`: a scored run's report as one self-contained HTML page over the HTTP
 * API (the contract's reportHtml), its numbers those of `GET /runs/:id/report`; a file the server
 * would write (outPath) is refused (the browser bridge admits by the same check), and nothing is written.
 * Runs on: Node (tests).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeTargetManifest } from '../helpers/temp.js';
import { startApi, waitForRun, type ApiHarness } from './harness.js';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('the report page over HTTP', () => {
  it('serves the page of a scored run, with the numbers of the JSON report; refuses outPath', async () => {
    api = await startApi();
    const manifest = writeTargetManifest(api.dir, 12);
    const created = await api.call('POST', '/runs', { body: { manifest, models: ['fast', 'steady'], epochs: 2, scorers: { scorers: [{ name: 'exact', type: 'match' }] } } });
    expect(created.status).toBe(201);
    const runId = created.json.id as string;
    await waitForRun(api, runId);
    await api.engine.scoring.finish(runId);

    const json = await api.call('GET', `/runs/${runId}/report`);
    const page = await api.call('GET', `/runs/${runId}/report.html?vignettes=5`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-disposition']).toBe(`inline; filename="${runId}-exact-report.html"`);
    expect(page.text.startsWith('<!DOCTYPE html>')).toBe(true);
    const embedded = /<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(page.text)![1]!;
    expect(JSON.parse(embedded)).toEqual(json.json);
    const table = JSON.parse(/<script type="application\/json" id="vignette-data">(.*?)<\/script>/s.exec(page.text)![1]!) as { rows: unknown[]; total: number };
    expect([table.rows.length, table.total]).toEqual([5, 12]);

    const target = join(api.dir, 'written.html');
    const refused = await api.call('GET', `/runs/${runId}/report.html?outPath=${encodeURIComponent(target)}`);
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: 'invalid_input', where: 'outPath' });
    expect(existsSync(target)).toBe(false);

    expect((await api.call('GET', '/runs/nope/report.html')).status).toBe(404);
  });
});
