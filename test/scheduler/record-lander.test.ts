import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import type { ResponseRecord } from '../../core/domain.js';
import { RecordLander } from '../../core/scheduler/record-lander.js';
import { ResponseLog } from '../../core/scheduler/response-log.js';
import { responsesPath } from '../../core/paths.js';
import { Store } from '../../core/store/store.js';
import { tempDir } from '../helpers/temp.js';

const JOBS = 8;
const VIGNETTES = 20;
let tmp: ReturnType<typeof tempDir>;
let store: Store;
let log: ResponseLog;
let jobs: Array<{ id: number; attempt: number; epoch: number }>;

beforeEach(async () => {
  tmp = tempDir();
  store = new Store(join(tmp.dir, 'p.db'));
  store.runs.beginStaging('r');
  store.runs.stageVignettes('r', Array.from({ length: VIGNETTES }, (_, i) => ({ index: i, id: `v${i}`, prompt: `p${i}` })));
  store.runs.insertRun({ id: 'r', manifestPath: '/m', models: ['m'], epochs: JOBS, vignetteCount: VIGNETTES, options: { concurrency: JOBS, sampling: {}, privacy: 'strict', skipPromptCache: false, shareCacheAcrossEpochs: false } });
  jobs = store.jobs.insertJobs('r', Array.from({ length: JOBS }, (_, e) => ({ model: 'm', epoch: e + 1 }))).map((j) => ({ id: j.id, epoch: j.epoch, attempt: store.jobs.startAttempt(j.id, 'w')! }));
  log = ResponseLog.open(store, tmp.dir, 'r');
  await log.reconcile();
});
afterEach(() => {
  log.close();
  store.close();
  tmp.cleanup();
});

const rec = (job: { id: number; epoch: number }, i: number): ResponseRecord => ({
  runId: 'r', jobId: job.id, vignetteId: `v${i}`, vignetteIndex: i, model: 'm', epoch: job.epoch, prompt: `p${i}`,
  response: `answer ${i}`, usage: { inputTokens: 3, outputTokens: 4 }, latencyMs: 2, host: 'mock/m', cached: false, sampling: {}, finishedAt: Date.now(),
});

const lines = () =>
  readFileSync(responsesPath(tmp.dir, 'r'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { seq: number; epoch: number; vignette_id: string });

it('lands the records of every job in flight in one commit, and the log in sequence order', async () => {
  const commits = vi.spyOn(store.records, 'appendBatches');
  const lander = new RecordLander(store, log, { maxDelayMs: 30, maxBatch: 1000 });
  const landedPerJob = new Map<number, number>();
  const sinks = jobs.map((j) => lander.sink(j.id, j.attempt, (rs) => landedPerJob.set(j.id, (landedPerJob.get(j.id) ?? 0) + rs.length)));
  for (let i = 0; i < 3; i++) for (const [k, sink] of sinks.entries()) sink.record(rec(jobs[k]!, i));
  expect(store.queries.responseCount('r')).toBe(0); // waiting for the group's commit
  await sleep(80);
  expect(commits).toHaveBeenCalledTimes(1);
  expect(store.queries.responseCount('r')).toBe(3 * JOBS);
  expect([...landedPerJob.values()]).toEqual(Array(JOBS).fill(3));
  const seqs = lines().map((l) => l.seq);
  expect(seqs).toHaveLength(3 * JOBS);
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  lander.close();
});

it('commits at once when maxBatch records wait across the jobs, not per job', () => {
  const commits = vi.spyOn(store.records, 'appendBatches');
  const lander = new RecordLander(store, log, { maxDelayMs: 60_000, maxBatch: 10 });
  const sinks = jobs.slice(0, 5).map((j) => lander.sink(j.id, j.attempt));
  // 5 jobs x 2 records = 10: the tenth record, whichever job it comes from, commits all ten.
  for (let i = 0; i < 2; i++) for (const [k, sink] of sinks.entries()) sink.record(rec(jobs[k]!, i));
  expect(commits).toHaveBeenCalledTimes(1);
  expect(store.queries.responseCount('r')).toBe(10);
  expect(lines()).toHaveLength(10);
  lander.close();
});

it('keeps the records of a failed commit and lands them later, without throwing into the worker', async () => {
  const real = store.records.appendBatches.bind(store.records);
  const commits = vi.spyOn(store.records, 'appendBatches').mockImplementationOnce(() => {
    throw new Error('SQLITE_FULL: database or disk is full');
  });
  commits.mockImplementation(real);
  const lander = new RecordLander(store, log, { maxDelayMs: 30, maxBatch: 2 });
  const sink = lander.sink(jobs[0]!.id, jobs[0]!.attempt);
  sink.record(rec(jobs[0]!, 0));
  expect(() => sink.record(rec(jobs[0]!, 1))).not.toThrow(); // the batch is full: this commit fails
  expect(store.queries.responseCount('r')).toBe(0);
  // While commits fail, more records wait for the timer rather than retrying each time.
  sink.record(rec(jobs[0]!, 2));
  expect(commits).toHaveBeenCalledTimes(1);
  await sleep(80);
  expect(commits).toHaveBeenCalledTimes(2);
  expect(store.queries.responseCount('r')).toBe(3);
  expect(lines().map((l) => l.vignette_id)).toEqual(['v0', 'v1', 'v2']);
  lander.close();
});

it("refuses a stale attempt's records while landing the others in the same commit", () => {
  const lander = new RecordLander(store, log, { maxDelayMs: 60_000, maxBatch: 1000 });
  const [a, b] = jobs;
  const stale = lander.sink(a!.id, a!.attempt);
  const current = lander.sink(b!.id, b!.attempt);
  // Job a was redelivered: its first attempt is stale now.
  store.jobs.noteRetry(a!.id, a!.attempt, 'worker lost');
  store.jobs.startAttempt(a!.id, 'w2');
  stale.record(rec(a!, 0));
  current.record(rec(b!, 0));
  lander.flush();
  expect(lines().map((l) => l.epoch)).toEqual([b!.epoch]);
  lander.close();
});

it('drain hands back what waits without writing it; close lands it', () => {
  const lander = new RecordLander(store, log, { maxDelayMs: 60_000, maxBatch: 1000 });
  const [a, b] = jobs;
  const drained = lander.sink(a!.id, a!.attempt);
  const closed = lander.sink(b!.id, b!.attempt);
  drained.record(rec(a!, 0));
  drained.record(rec(a!, 1));
  closed.record(rec(b!, 0));
  expect(drained.drain().map((r) => r.vignetteIndex)).toEqual([0, 1]);
  closed.close();
  expect(store.queries.responseCount('r')).toBe(1);
  // Neither sink is flushed again: the drained records belong to the job outcome's transaction,
  // and a record that comes after its attempt settled is dropped, not kept waiting.
  drained.record(rec(a!, 2));
  lander.flush();
  expect(store.queries.responseCount('r')).toBe(1);
  // Nothing of the late record waits either: draining again hands back nothing.
  expect(drained.drain()).toEqual([]);
  lander.close();
});

it('makes landed records durable at most once every syncEveryMs, and appends them to responses.jsonl only then', async () => {
  const syncs = vi.spyOn(store, 'syncWal');
  const lander = new RecordLander(store, log, { maxDelayMs: 60_000, maxBatch: 2, syncEveryMs: 150 });
  const sink = lander.sink(jobs[0]!.id, jobs[0]!.attempt);
  sink.record(rec(jobs[0]!, 0));
  sink.record(rec(jobs[0]!, 1)); // a commit, and the first sync at once
  expect(syncs).toHaveBeenCalledTimes(1);
  expect(lines()).toHaveLength(2);
  sink.record(rec(jobs[0]!, 2));
  sink.record(rec(jobs[0]!, 3)); // landed and counted, but not synced yet: not in the file
  expect(store.queries.responseCount('r')).toBe(4);
  expect(syncs).toHaveBeenCalledTimes(1);
  expect(lines()).toHaveLength(2);
  await sleep(250);
  expect(syncs).toHaveBeenCalledTimes(2);
  expect(lines().map((l) => l.vignette_id)).toEqual(['v0', 'v1', 'v2', 'v3']);
  lander.close();
});

it('syncs at once when maxUnsynced records wait, however recent the last sync', () => {
  const syncs = vi.spyOn(store, 'syncWal');
  const lander = new RecordLander(store, log, { maxDelayMs: 60_000, maxBatch: 1, syncEveryMs: 60_000, maxUnsynced: 3 });
  const sink = lander.sink(jobs[0]!.id, jobs[0]!.attempt);
  for (let i = 0; i < 3; i++) sink.record(rec(jobs[0]!, i)); // the first syncs; two wait
  expect(syncs).toHaveBeenCalledTimes(1);
  expect(lines()).toHaveLength(1);
  sink.record(rec(jobs[0]!, 3)); // the third waiting
  expect(syncs).toHaveBeenCalledTimes(2);
  expect(lines()).toHaveLength(4);
  lander.close();
});

it("appends what waits for a sync before a job outcome's records: that commit synced them", () => {
  const syncs = vi.spyOn(store, 'syncWal');
  const lander = new RecordLander(store, log, { maxDelayMs: 60_000, maxBatch: 1, syncEveryMs: 60_000 });
  const job = jobs[0]!;
  const sink = lander.sink(job.id, job.attempt);
  sink.record(rec(job, 0)); // synced at once (the first)
  sink.record(rec(job, 1)); // waits for a sync
  // A refused outcome (stale or duplicate) wrote and synced nothing: what waits stays out of the file.
  lander.outcomeLanded({ landed: false, records: [] });
  expect(lines()).toHaveLength(1);
  const rest = Array.from({ length: VIGNETTES - 2 }, (_, i) => rec(job, i + 2));
  const outcome = store.records.settle(
    { jobId: job.id, attempt: job.attempt, workerId: 'w', vignettesDone: VIGNETTES, usage: { inputTokens: 3 * VIGNETTES, outputTokens: 4 * VIGNETTES } },
    sink.drain().concat(rest),
  );
  lander.outcomeLanded(outcome);
  expect(syncs).toHaveBeenCalledTimes(1);
  const seqs = lines().map((l) => l.seq);
  expect(lines().map((l) => l.vignette_id)).toEqual(Array.from({ length: VIGNETTES }, (_, i) => `v${i}`));
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  lander.close();
});

it('keeps landed records out of responses.jsonl while the sync fails, and appends them once it succeeds', async () => {
  const real = store.syncWal.bind(store);
  vi.spyOn(store, 'syncWal')
    .mockImplementationOnce(() => {
      throw new Error('EIO: i/o error, fdatasync');
    })
    .mockImplementation(real);
  const lander = new RecordLander(store, log, { maxDelayMs: 60_000, maxBatch: 1, syncEveryMs: 40 });
  const sink = lander.sink(jobs[0]!.id, jobs[0]!.attempt);
  expect(() => sink.record(rec(jobs[0]!, 0))).not.toThrow();
  expect(store.queries.responseCount('r')).toBe(1);
  expect(lines()).toHaveLength(0);
  await sleep(120);
  expect(lines().map((l) => l.vignette_id)).toEqual(['v0']);
  lander.close();
});

it('close lands and syncs whatever waits', () => {
  const lander = new RecordLander(store, log, { maxDelayMs: 60_000, maxBatch: 1, syncEveryMs: 60_000 });
  const sink = lander.sink(jobs[0]!.id, jobs[0]!.attempt);
  sink.record(rec(jobs[0]!, 0));
  sink.record(rec(jobs[0]!, 1));
  sink.record(rec(jobs[0]!, 2));
  expect(lines()).toHaveLength(1);
  lander.close();
  expect(lines().map((l) => l.vignette_id)).toEqual(['v0', 'v1', 'v2']);
});
