import { appendFileSync, readFileSync, truncateSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ResponseRecord } from '../../core/domain.js';
import { ResponseLog, responsesPath } from '../../core/scheduler/response-log.js';
import { Store } from '../../core/store/store.js';
import { tempDir } from '../helpers/temp.js';

let tmp: ReturnType<typeof tempDir>;
let store: Store;
let jobId: number;
let attempt: number;

beforeEach(() => {
  tmp = tempDir();
  store = new Store(join(tmp.dir, 'p.db'));
  store.beginStaging('r');
  store.stageVignettes('r', Array.from({ length: 20 }, (_, i) => ({ index: i, id: `v${i}`, prompt: `p${i}` })));
  store.insertRun({ id: 'r', manifestPath: '/m', models: ['m'], epochs: 1, vignetteCount: 20, options: { concurrency: 1, sampling: {}, privacy: 'strict', skipPromptCache: false, shareCacheAcrossEpochs: false } });
  jobId = store.insertJobs('r', [{ model: 'm', epoch: 1 }])[0]!.id;
  attempt = store.startAttempt(jobId, 'w')!;
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

const lines = () => readFileSync(responsesPath(tmp.dir, 'r'), 'utf8').trimEnd().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { seq: number; vignette_id: string });

it('appends landed records as one JSON object per line with the documented fields', () => {
  const log = ResponseLog.open(store, tmp.dir, 'r');
  log.append(store.appendRecords(jobId, attempt, [rec(0), rec(1)]));
  log.close();
  const [first] = readFileSync(responsesPath(tmp.dir, 'r'), 'utf8').split('\n');
  const obj = JSON.parse(first!) as Record<string, unknown>;
  expect(obj).toMatchObject({
    run_id: 'r', job_id: jobId, vignette_id: 'v0', model: 'm', epoch: 1, prompt: 'p0',
    response: 'answer 0 with "quotes"\nand a newline', usage: { input_tokens: 3, output_tokens: 4 }, latency_ms: 2,
  });
});

it('completes the log from the database after a crash between commit and append', () => {
  const log = ResponseLog.open(store, tmp.dir, 'r');
  log.append(store.appendRecords(jobId, attempt, [rec(0), rec(1), rec(2)]));
  store.appendRecords(jobId, attempt, [rec(3), rec(4)]); // committed, never appended: the crash
  log.close();
  ResponseLog.open(store, tmp.dir, 'r').close();
  expect(lines().map((l) => l.vignette_id)).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
  // Opening again adds nothing: never twice.
  ResponseLog.open(store, tmp.dir, 'r').close();
  expect(lines()).toHaveLength(5);
});

it('cuts a torn last line and restores its record from the database', () => {
  const log = ResponseLog.open(store, tmp.dir, 'r');
  log.append(store.appendRecords(jobId, attempt, [rec(0), rec(1), rec(2)]));
  log.close();
  const path = responsesPath(tmp.dir, 'r');
  truncateSync(path, statSync(path).size - 25); // the last line loses its end, and its newline
  ResponseLog.open(store, tmp.dir, 'r').close();
  const got = lines();
  expect(got.map((l) => l.vignette_id)).toEqual(['v0', 'v1', 'v2']);
  expect(readFileSync(path, 'utf8').endsWith('\n')).toBe(true);
});

it('repairs a file that holds only a torn line', () => {
  store.appendRecords(jobId, attempt, [rec(0)]);
  const path = responsesPath(tmp.dir, 'r');
  ResponseLog.open(store, tmp.dir, 'r').close();
  truncateSync(path, 0);
  appendFileSync(path, '{"seq":1,"run_id":"r","vign');
  ResponseLog.open(store, tmp.dir, 'r').close();
  expect(lines().map((l) => l.vignette_id)).toEqual(['v0']);
});

it('handles lines longer than its read-back chunk', () => {
  const big = { ...rec(0), response: 'x'.repeat(200_000) };
  const log = ResponseLog.open(store, tmp.dir, 'r');
  log.append(store.appendRecords(jobId, attempt, [big, rec(1)]));
  log.append(store.appendRecords(jobId, attempt, [{ ...rec(2), response: 'y'.repeat(150_000) }]));
  log.close();
  store.appendRecords(jobId, attempt, [rec(3)]);
  ResponseLog.open(store, tmp.dir, 'r').close();
  expect(lines().map((l) => l.vignette_id)).toEqual(['v0', 'v1', 'v2', 'v3']);
});
