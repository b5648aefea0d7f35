/**
 * The owner's fence on a real database file: once the run was put back in the queue and claimed
 * under another owner id, every write of the old owner is refused in its own transaction and
 * changes nothing; the new owner's writes go through and extend the lease.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ResponseRecord, RunOptions } from '../../core/domain.js';
import { RunLostError, type RunFence } from '../../core/store/run-fence.js';
import { Store } from '../../core/store/store.js';
import { tempDir } from '../helpers/temp.js';

const OPTIONS: RunOptions = { concurrency: 4, sampling: {}, privacy: 'strict', skipPromptCache: false, shareCacheAcrossEpochs: false };

function record(jobId: number, idx: number): ResponseRecord {
  return {
    runId: 'r1', jobId, vignetteId: `v${idx}`, vignetteIndex: idx, model: 'm', epoch: 1, prompt: `p${idx}`,
    response: `a${idx}`, usage: { inputTokens: 1, outputTokens: 1 }, latencyMs: 1, host: 'test/m', cached: false,
    sampling: {}, finishedAt: Date.now(),
  };
}

let tmp: ReturnType<typeof tempDir>;
let store: Store;
beforeEach(() => {
  tmp = tempDir();
  store = new Store(join(tmp.dir, 'p.db'));
  store.runs.beginStaging('r1');
  store.runs.stageVignettes('r1', [0, 1, 2].map((i) => ({ index: i, id: `v${i}`, prompt: `p${i}` })));
  store.runs.insertRun({ id: 'r1', manifestPath: '/m.jsonl', models: ['m'], epochs: 1, vignetteCount: 3, options: OPTIONS });
});
afterEach(() => {
  store.close();
  tmp.cleanup();
});

it('a taken-over owner writes nothing: attempts, records, outcomes, failures, settlement and external writes are refused', () => {
  const old: RunFence = { runId: 'r1', owner: 'h:1:aaaaaa', leaseMs: 50 };
  expect(store.runs.claimRun('r1', old.owner, old.leaseMs)).not.toBeNull();
  const [job] = store.jobs.insertJobs('r1', [{ model: 'm', epoch: 1 }], old);
  const attempt = store.jobs.startAttempt(job!.id, 'w', old)!;
  expect(store.records.append(job!.id, attempt, [record(job!.id, 0)], old)).toHaveLength(1);

  // The lease lapses (a stall), recovery puts the run back, and another owner claims it.
  store.db.prepare('UPDATE runs SET lease_until = 0 WHERE id = ?').run('r1');
  expect(store.runs.recoverInterruptedRuns()).toEqual(['r1']);
  const next: RunFence = { runId: 'r1', owner: 'h:2:bbbbbb', leaseMs: 60_000 };
  expect(store.runs.claimRun('r1', next.owner, next.leaseMs)).not.toBeNull();

  const before = JSON.stringify([store.queries.getRun('r1'), store.queries.jobs('r1'), store.queries.responseCount('r1')]);
  expect(() => store.jobs.startAttempt(job!.id, 'w', old)).toThrow(RunLostError);
  expect(() => store.records.append(job!.id, attempt, [record(job!.id, 1)], old)).toThrow(RunLostError);
  expect(() => store.records.settle({ jobId: job!.id, attempt, workerId: 'w', vignettesDone: 3, usage: { inputTokens: 0, outputTokens: 0 } }, [record(job!.id, 1), record(job!.id, 2)], old)).toThrow(RunLostError);
  expect(() => store.jobs.failJob(job!.id, attempt, 'x', old)).toThrow(RunLostError);
  expect(() => store.jobs.noteRetry(job!.id, attempt, 'x', old)).toThrow(RunLostError);
  expect(() => store.runs.settleRun('r1', old)).toThrow(RunLostError);
  expect(() => store.runs.failRun('r1', 'x', old)).toThrow(RunLostError);
  let wrote = false;
  expect(() => store.runs.fenced(old, () => (wrote = true))).toThrow(RunLostError);
  expect(wrote).toBe(false);
  expect(JSON.stringify([store.queries.getRun('r1'), store.queries.jobs('r1'), store.queries.responseCount('r1')])).toBe(before);

  // The new owner's writes go through, and each extends its lease.
  const a2 = store.jobs.startAttempt(job!.id, 'w', next)!;
  expect(a2).toBe(attempt + 1);
  expect(store.records.append(job!.id, a2, [record(job!.id, 1), record(job!.id, 2)], next)).toHaveLength(2);
  const leaseUntil = (store.db.prepare('SELECT lease_until FROM runs').get() as { lease_until: number }).lease_until;
  expect(leaseUntil).toBeGreaterThan(Date.now() + 50_000);
});

it('a cancelled run fences its owner out too', () => {
  const fence: RunFence = { runId: 'r1', owner: 'h:1:cccccc', leaseMs: 60_000 };
  store.runs.claimRun('r1', fence.owner, fence.leaseMs);
  store.runs.cancelRun('r1');
  expect(() => store.jobs.insertJobs('r1', [{ model: 'm', epoch: 1 }], fence)).toThrow(RunLostError);
});
