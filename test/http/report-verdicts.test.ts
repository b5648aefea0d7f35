/**
 * The report's verdict fields over real HTTP, as the service gives them: a two-judge scorer's
 * Krippendorff alpha, the one "not scored" count, and a boolean code plugin declared graded read
 * as pass/fail alike in the report and the score matrix.
 * Runs on: Node (tests), a real server on 127.0.0.1 port 0 over a real SQLite file.
 */
import { afterEach, expect, it } from 'vitest';
import { writeTargetManifest } from '../helpers/temp.js';
import { startApi, type ApiHarness } from './harness.js';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

it('serves alpha, not_scored and the observed kind in the report and the matrix', async () => {
  api = await startApi({ startScheduler: false });
  const e = api.engine;
  e.scoring.start();
  const run = await e.service.createRun({
    manifestPath: writeTargetManifest(api.dir, 12),
    models: ['mock-strong', 'mock-weak'],
    epochs: 2,
    privacy: 'off',
    scorers: {
      scorers: [
        { name: 'two', type: 'judge', judges: ['mock-judge', 'mock-judge-2'], rubric: 'Is the answer the right option?' },
        { name: 'same', type: 'code', code: `function score(i) { return i.response.trim() === String(i.target); }` },
      ],
    },
  });
  await e.scheduler.runToCompletion(run.id);
  await e.scoring.finish(run.id);

  const two = await api.call('GET', `/runs/${run.id}/report?scorer=two`);
  expect(two.status).toBe(200);
  const direct = await e.service.report({ runId: run.id, scorer: 'two' });
  expect(two.json.judges).toEqual(direct.judges);
  expect(typeof two.json.judges.alpha).toBe('number');
  expect(two.json).toMatchObject({ not_scored: 0, not_scored_reason: null, failed: 0, failure: null });

  const same = await api.call('GET', `/runs/${run.id}/report?scorer=same`);
  expect(same.json).toMatchObject({ kind: 'pass_fail', declared_kind: 'graded' });
  const matrix = await api.call('GET', `/runs/${run.id}/scores/matrix?scorer=same&limit=12`);
  expect(matrix.status).toBe(200);
  expect(matrix.json.kind).toBe('pass_fail');
  expect(matrix.json.rows.flatMap((r: { cells: { flipRate: number | null }[] }) => r.cells).every((c: { flipRate: number | null }) => c.flipRate !== null)).toBe(true);
}, 120_000);
