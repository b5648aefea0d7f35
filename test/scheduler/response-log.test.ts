import { appendFileSync, readFileSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ResponseRecord } from '../../core/domain.js';
import { ResponseLog } from '../../core/scheduler/response-log.js';
import { responsesPath } from '../../core/paths.js';
import { Store } from '../../core/store/store.js';
import { tempDir } from '../helpers/temp.js';

let tmp: ReturnType<typeof tempDir>;
let store: Store;
let jobId: number;
let attempt: number;

beforeEach(() => {
  tmp = tempDir();
  store = new Store(join(tmp.dir, 'p.db'));
  store.runs.beginStaging('r');
  store.runs.stageVignettes('r', Array.from({ length: 20 }, (_, i) => ({ index: i, id: `v${i}`, prompt: `p${i}` })));
  store.runs.insertRun({ id: 'r', manifestPath: '/m', models: ['m'], epochs: 1, vignetteCount: 20, options: { concurrency: 1, sampling: {}, privacy: 'strict', skipPromptCache: false, shareCacheAcrossEpochs: false } });
  jobId = store.jobs.insertJobs('r', [{ model: 'm', epoch: 1 }])[0]!.id;
  attempt = store.jobs.startAttempt(jobId, 'w')!;
});
afterEach(() => {
  store.close();
  tmp.cleanup();
});

const rec = (i: number): ResponseRecord => ({
  runId: 'r', jobId, vignetteId: `v${i}`, vignetteIndex: i, model: 'm', epoch: 1, prompt: `p${i}`,
  response: `answer ${i} with "quotes"\nand a newline`, usage: { inputTokens: 3, outputTokens: 4 }, latencyMs: 2,
  host: 'mock/m', cached: false, sampling: {}, finishedAt: Date.now(),
});

/** Opens the log as a run's owner does: checked against the database and completed from it. */
async function reconciled(): Promise<ResponseLog> {
  const log = ResponseLog.open(store, tmp.dir, 'r');
  await log.reconcile();
  return log;
}
const reopen = async () => (await reconciled()).close();

const lines = () => readFileSync(responsesPath(tmp.dir, 'r'), 'utf8').trimEnd().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { seq: number; vignette_id: string });

it('appends landed records as one JSON object per line with the documented fields', async () => {
  const log = await reconciled();
  log.append(store.records.append(jobId, attempt, [rec(0), rec(1)]));
  log.close();
  const [first] = readFileSync(responsesPath(tmp.dir, 'r'), 'utf8').split('\n');
  const obj = JSON.parse(first!) as Record<string, unknown>;
  expect(obj).toMatchObject({
    run_id: 'r', job_id: jobId, vignette_id: 'v0', model: 'm', epoch: 1, prompt: 'p0',
    response: 'answer 0 with "quotes"\nand a newline', usage: { input_tokens: 3, output_tokens: 4 }, latency_ms: 2,
  });
});

it('completes the log from the database after a crash between commit and append', async () => {
  const log = await reconciled();
  log.append(store.records.append(jobId, attempt, [rec(0), rec(1), rec(2)]));
  store.records.append(jobId, attempt, [rec(3), rec(4)]); // committed, never appended: the crash
  log.close();
  await reopen();
  expect(lines().map((l) => l.vignette_id)).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
  // Opening again adds nothing: never twice.
  await reopen();
  expect(lines()).toHaveLength(5);
});

it('cuts a torn last line and restores its record from the database', async () => {
  const log = await reconciled();
  log.append(store.records.append(jobId, attempt, [rec(0), rec(1), rec(2)]));
  log.close();
  const path = responsesPath(tmp.dir, 'r');
  truncateSync(path, statSync(path).size - 25); // the last line loses its end, and its newline
  await reopen();
  const got = lines();
  expect(got.map((l) => l.vignette_id)).toEqual(['v0', 'v1', 'v2']);
  expect(readFileSync(path, 'utf8').endsWith('\n')).toBe(true);
});

it('repairs a file that holds only a torn line', async () => {
  store.records.append(jobId, attempt, [rec(0)]);
  const path = responsesPath(tmp.dir, 'r');
  await reopen();
  truncateSync(path, 0);
  appendFileSync(path, '{"seq":1,"run_id":"r","vign');
  await reopen();
  expect(lines().map((l) => l.vignette_id)).toEqual(['v0']);
});

it('handles lines longer than its read-back chunk', async () => {
  const big = { ...rec(0), response: 'x'.repeat(200_000) };
  const log = await reconciled();
  log.append(store.records.append(jobId, attempt, [big, rec(1)]));
  log.append(store.records.append(jobId, attempt, [{ ...rec(2), response: 'y'.repeat(150_000) }]));
  log.close();
  store.records.append(jobId, attempt, [rec(3)]);
  await reopen();
  expect(lines().map((l) => l.vignette_id)).toEqual(['v0', 'v1', 'v2', 'v3']);
});

const allIds = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);

it('rebuilds a file deleted while the run appends to it, at the next append', async () => {
  const log = await reconciled();
  log.append(store.records.append(jobId, attempt, [rec(0), rec(1), rec(2)]));
  unlinkSync(responsesPath(tmp.dir, 'r'));
  log.append(store.records.append(jobId, attempt, [rec(3), rec(4)]));
  expect(lines().map((l) => l.vignette_id)).toEqual(allIds(5));
  log.close();
});

it('takes up a file cut mid-line under it: the torn line is cut and every record is there once', async () => {
  const log = await reconciled();
  log.append(store.records.append(jobId, attempt, [rec(0), rec(1), rec(2), rec(3)]));
  const path = responsesPath(tmp.dir, 'r');
  truncateSync(path, Math.floor(statSync(path).size / 2));
  log.append(store.records.append(jobId, attempt, [rec(4)]));
  expect(lines().map((l) => l.vignette_id)).toEqual(allIds(5));
  log.close();
});

it('cuts lines written by someone else at the next append, and writes the run\'s own in their place', async () => {
  const log = await reconciled();
  log.append(store.records.append(jobId, attempt, [rec(0), rec(1)]));
  appendFileSync(responsesPath(tmp.dir, 'r'), '{"not":"ours"}\n');
  log.append(store.records.append(jobId, attempt, [rec(2)]));
  expect(lines().map((l) => l.vignette_id)).toEqual(allIds(3));
  log.close();
});

it('reconciles a file with a line missing, a foreign line and an extra line into exactly the records', async () => {
  const log = await reconciled();
  log.append(store.records.append(jobId, attempt, [0, 1, 2, 3, 4, 5].map(rec)));
  log.close();
  const path = responsesPath(tmp.dir, 'r');
  const text = readFileSync(path, 'utf8').split('\n');
  const [l0, l1, , l3, l4, l5] = text;
  // Line 2 lost, a foreign line after line 3, and line 5 twice.
  writeFileSync(path, [l0, l1, l3, '{"seq":999,"foreign":true}', l4, l5, l5, ''].join('\n'));
  const again = ResponseLog.open(store, tmp.dir, 'r');
  const { cutBytes, written } = await again.reconcile();
  again.close();
  expect(cutBytes).toBeGreaterThan(0);
  expect(written).toBe(4);
  expect(lines().map((l) => l.vignette_id)).toEqual(allIds(6));
  // A whole file is left as it is.
  expect(await (async () => {
    const l = ResponseLog.open(store, tmp.dir, 'r');
    const r = await l.reconcile();
    l.close();
    return r;
  })()).toEqual({ cutBytes: 0, written: 0 });
});

it('checks a file larger than its read chunk, yielding to the event loop between pieces', async () => {
  const big = 'z'.repeat(300_000);
  const log = await reconciled();
  log.append(store.records.append(jobId, attempt, Array.from({ length: 12 }, (_, i) => ({ ...rec(i), response: big }))));
  log.close();
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 0);
  const again = ResponseLog.open(store, tmp.dir, 'r');
  expect(await again.reconcile()).toEqual({ cutBytes: 0, written: 0 });
  again.close();
  clearInterval(ticker);
  expect(ticks).toBeGreaterThan(0);
});

it("at a run's end, a file known whole is left as it is, and one that is not is completed", async () => {
  const path = responsesPath(tmp.dir, 'r');
  const log = await reconciled();
  log.append(store.records.append(jobId, attempt, [rec(0), rec(1), rec(2)]));
  // Whole: every landed record appended, nothing changed underneath.
  expect(await log.finish()).toEqual({ cutBytes: 0, written: 0 });
  expect(lines().map((l) => l.vignette_id)).toEqual(['v0', 'v1', 'v2']);

  // A record that landed without its append (the lander stopped between the two): written from the database.
  store.records.append(jobId, attempt, [rec(3)]);
  expect(await log.finish()).toEqual({ cutBytes: 0, written: 1 });
  expect(lines().map((l) => l.vignette_id)).toEqual(['v0', 'v1', 'v2', 'v3']);

  // Cut short under the log: the whole check runs, and the file comes back complete.
  truncateSync(path, statSync(path).size - 10);
  const repaired = await log.finish();
  expect(repaired.written).toBe(1);
  expect(lines().map((l) => l.vignette_id)).toEqual(['v0', 'v1', 'v2', 'v3']);
  expect(await log.finish()).toEqual({ cutBytes: 0, written: 0 });
  log.close();
});
