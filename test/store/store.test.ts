import { spawn } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { estCostUsd } from '../../core/common/cost.js';
import type { IndexedVignette, ResponseRecord, RunOptions } from '../../core/domain.js';
import { MIGRATIONS } from '../../core/store/migrations.js';
import { Store } from '../../core/store/store.js';
import { tempDir } from '../helpers/temp.js';

const OPTIONS: RunOptions = { concurrency: 4, sampling: {}, privacy: 'strict', skipPromptCache: false, shareCacheAcrossEpochs: false };

function vignettes(n: number): IndexedVignette[] {
  return Array.from({ length: n }, (_, i) => ({ index: i, id: `v${i}`, prompt: `prompt ${i}` }));
}

function record(runId: string, jobId: number, model: string, epoch: number, idx: number, input: number, output: number): ResponseRecord {
  return {
    runId, jobId, vignetteId: `v${idx}`, vignetteIndex: idx, model, epoch, prompt: `prompt ${idx}`,
    response: `answer ${idx}`, usage: { inputTokens: input, outputTokens: output }, latencyMs: 1,
    host: `test/${model}`, cached: false, sampling: {}, finishedAt: Date.now(),
  };
}

function createRun(store: Store, id: string, models: string[], epochs: number, n: number) {
  store.runs.beginStaging(id);
  store.runs.stageVignettes(id, vignettes(n));
  store.runs.insertRun({ id, manifestPath: '/m.jsonl', models, epochs, vignetteCount: n, options: OPTIONS });
  return store.jobs.insertJobs(id, models.flatMap((model) => Array.from({ length: epochs }, (_, e) => ({ model, epoch: e + 1 }))));
}

describe('Store', () => {
  let tmp: ReturnType<typeof tempDir>;
  let store: Store;
  beforeEach(() => {
    tmp = tempDir();
    store = new Store(join(tmp.dir, 'p.db'));
  });
  afterEach(() => {
    store.close();
    tmp.cleanup();
  });

  it('commits withoutSync at synchronous=NORMAL, then back to FULL, even when the commit throws', () => {
    const level = () => store.db.pragma('synchronous', { simple: true });
    expect(level()).toBe(2); // FULL
    expect(store.withoutSync(() => level())).toBe(1); // NORMAL
    expect(() =>
      store.withoutSync(() => {
        throw new Error('SQLITE_FULL');
      }),
    ).toThrow('SQLITE_FULL');
    expect(level()).toBe(2);
  });

  it.skipIf(process.platform !== 'linux')(`syncWal syncs the write-ahead log through a handle of its own, closed with the store${process.platform === 'linux' ? '' : ' (skipped: reads /proc/self/fd, Linux only)'}`, () => {
    const walHandles = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === join(tmp.dir, 'p.db-wal');
        } catch {
          return false; // the directory's own handle, gone by now
        }
      }).length;
    createRun(store, 'r', ['m'], 1, 2);
    const sqlite = walHandles();
    store.syncWal();
    store.syncWal();
    expect(walHandles()).toBe(sqlite + 1);
    store.close();
    expect(walHandles()).toBe(0);
    const memory = new Store(':memory:');
    expect(() => memory.syncWal()).not.toThrow(); // nothing to sync
    memory.close();
  });

  it('applies every migration once, and reopening changes nothing', () => {
    expect(store.schemaVersion()).toBe(MIGRATIONS.length);
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    store.close();
    store = new Store(join(tmp.dir, 'p.db'));
    expect(store.schemaVersion()).toBe(MIGRATIONS.length);
  });

  // The /stats accounting: calls count records (model calls), not jobs.
  it('usage_by_model_sums_across_jobs', () => {
    const [job1, job2] = createRun(store, 'run1', ['claude'], 2, 2);
    const a1 = store.jobs.startAttempt(job1!.id, 'w')!;
    const a2 = store.jobs.startAttempt(job2!.id, 'w')!;
    expect(store.records.append(job1!.id, a1, [record('run1', job1!.id, 'claude', 1, 0, 100, 10)])).toHaveLength(1);
    const landed = store.records.settle(
      { jobId: job2!.id, attempt: a2, workerId: 'w', vignettesDone: 2, usage: { inputTokens: 100, outputTokens: 10 } },
      [record('run1', job2!.id, 'claude', 2, 0, 50, 5), record('run1', job2!.id, 'claude', 2, 1, 50, 5)],
    );
    expect(landed.landed).toBe(true);
    const stats = store.queries.usageByModel();
    expect(stats).toHaveLength(1);
    expect(stats[0]).toEqual({
      model: 'claude', inputTokens: 200, outputTokens: 20, calls: 3, cachedCalls: 0, cachedInputTokens: 0, cachedOutputTokens: 0,
    });
  });

  it('prices 1M input + 1M output tokens at the flat fallback as $18.00', () => {
    expect(estCostUsd({ inputTokens: 1_000_000, outputTokens: 1_000_000 })).toBe(18);
    expect(estCostUsd({ inputTokens: 1_000_000, outputTokens: 0 }, { inputPerMTok: 0.15, outputPerMTok: 0.6 })).toBeCloseTo(0.15);
  });

  it('sums tokens as 64-bit integers past 2^32', () => {
    const [job] = createRun(store, 'big', ['m'], 1, 3);
    const a = store.jobs.startAttempt(job!.id, 'w')!;
    const huge = 3_000_000_000;
    store.records.append(job!.id, a, [0, 1, 2].map((i) => record('big', job!.id, 'm', 1, i, huge, huge)));
    expect(store.queries.usageByModel('big')[0]).toMatchObject({ inputTokens: 3 * huge, outputTokens: 3 * huge, calls: 3 });
  });

  it('lands a job once: a duplicate outcome and a stale attempt change nothing', () => {
    const [job] = createRun(store, 'r', ['m'], 1, 2);
    const first = store.jobs.startAttempt(job!.id, 'w1')!;
    const second = store.jobs.startAttempt(job!.id, 'w2')!; // redelivered: attempt 1 is now stale
    expect(second).toBe(first + 1);
    const recs = [record('r', job!.id, 'm', 1, 0, 5, 5), record('r', job!.id, 'm', 1, 1, 5, 5)];
    const outcome = (attempt: number) => ({ jobId: job!.id, attempt, workerId: 'w', vignettesDone: 2, usage: { inputTokens: 10, outputTokens: 10 } });

    expect(store.records.append(job!.id, first, recs)).toEqual([]);
    expect(store.records.settle(outcome(first), recs).landed).toBe(false);
    expect(store.queries.responseCount('r')).toBe(0);

    expect(store.records.settle(outcome(second), recs).landed).toBe(true);
    const after = store.queries.getRun('r')!;
    expect(after.doneCount).toBe(1);
    expect(store.records.settle(outcome(second), recs).landed).toBe(false);
    expect(store.records.settle(outcome(first), recs).landed).toBe(false);
    expect(store.queries.getRun('r')!.doneCount).toBe(1);
    expect(store.queries.responseCount('r')).toBe(2);
    expect(store.queries.runResults('r')).toHaveLength(2);
    expect(store.queries.usageByModel('r')[0]).toMatchObject({ inputTokens: 10, outputTokens: 10, calls: 2 });
  });

  it('refuses to settle a job as done while vignettes lack records', () => {
    const [job] = createRun(store, 'r', ['m'], 1, 3);
    const a = store.jobs.startAttempt(job!.id, 'w')!;
    expect(() =>
      store.records.settle({ jobId: job!.id, attempt: a, workerId: 'w', vignettesDone: 1, usage: { inputTokens: 1, outputTokens: 1 } }, [
        record('r', job!.id, 'm', 1, 0, 1, 1),
      ]),
    ).toThrow(/1 of 3 records/);
    expect(store.queries.getRun('r')!.doneCount).toBe(0);
    expect(store.queries.responseCount('r')).toBe(0); // the whole transaction rolled back
  });

  it('hands out the oldest queued run and each run once', () => {
    createRun(store, 'a', ['m'], 1, 1);
    createRun(store, 'b', ['m'], 1, 1);
    expect(store.runs.claimNextRun('me', 1000)!.id).toBe('a');
    expect(store.runs.claimNextRun('me', 1000)!.id).toBe('b');
    expect(store.runs.claimNextRun('me', 1000)).toBeNull();
    expect(store.runs.claimRun('a', 'other', 1000)).toBeNull();
  });

  it('puts a run back in the queue when its owner process is dead or its lease lapsed', async () => {
    createRun(store, 'a', ['m'], 1, 1);
    createRun(store, 'b', ['m'], 1, 1);
    const child = spawn(process.execPath, ['-e', '0']);
    const deadPid = child.pid!;
    await new Promise((r) => child.on('exit', r));
    const hostname = (await import('node:os')).hostname();
    store.runs.claimNextRun(`${hostname}:${deadPid}:x`, 60_000); // a: owner dead
    store.runs.claimNextRun(`elsewhere:1:x`, -1); // b: lease already lapsed
    const [jobA] = store.queries.jobs('a');
    store.jobs.startAttempt(jobA!.id, 'w');
    expect(store.runs.recoverInterruptedRuns().sort()).toEqual(['a', 'b']);
    expect(store.queries.getRun('a')!.status).toBe('queued');
    expect(store.queries.jobs('a')[0]!.status).toBe('pending');
    // A live owner with a valid lease keeps its run.
    store.runs.claimNextRun(`${hostname}:${process.pid}:x`, 60_000);
    expect(store.runs.recoverInterruptedRuns()).toEqual([]);
  });

  it("pages a job's pending vignettes in order, skipping those it already answered, while records land in between", () => {
    const [job, other] = createRun(store, 'p', ['m'], 2, 10);
    const a = store.jobs.startAttempt(job!.id, 'w')!;
    store.records.append(job!.id, a, [0, 3, 4, 9].map((i) => record('p', job!.id, 'm', 1, i, 1, 1)));
    expect(store.jobs.landedCount(job!.id)).toBe(4);
    // Pages of 2 across the gaps; a record landing mid-iteration (for a vignette already yielded) changes nothing.
    const seen: number[] = [];
    for (const v of store.jobs.pendingVignettes('p', job!.id, 2)) {
      seen.push(v.index);
      if (v.index === 2) store.records.append(job!.id, a, [record('p', job!.id, 'm', 1, 2, 1, 1)]);
    }
    expect(seen).toEqual([1, 2, 5, 6, 7, 8]);
    expect([...store.jobs.pendingVignettes('p', job!.id)].map((v) => v.index)).toEqual([1, 5, 6, 7, 8]);
    // Another job of the run has answered nothing: all of them, with their fields.
    const all = [...store.jobs.pendingVignettes('p', other!.id, 3)];
    expect(all).toEqual(vignettes(10));
  });

  it('discards vignettes of a run whose creation never finished', () => {
    store.runs.beginStaging('ghost');
    store.runs.stageVignettes('ghost', vignettes(5));
    expect(store.runs.discardAbandonedStaging()).toBe(1);
    expect([...store.jobs.pendingVignettes('ghost', 0)]).toEqual([]);
    expect(store.queries.listRuns()).toEqual([]);
  });

  it('pages responses by cursor and filters by model, epoch and text', () => {
    const jobs = createRun(store, 'r', ['m1', 'm2'], 2, 10);
    for (const job of jobs) {
      const a = store.jobs.startAttempt(job.id, 'w')!;
      store.records.append(job.id, a, Array.from({ length: 10 }, (_, i) => record('r', job.id, job.model, job.epoch, i, 1, 1)));
    }
    const seen: number[] = [];
    let cursor: number | undefined;
    for (;;) {
      const page = store.queries.responses('r', {}, { limit: 7, ...(cursor === undefined ? {} : { cursor }) });
      seen.push(...page.items.map((i) => i.seq));
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    expect(seen).toHaveLength(40);
    expect(new Set(seen).size).toBe(40);
    expect(store.queries.responses('r', { model: 'm2', epoch: 1 }).items).toHaveLength(10);
    expect(store.queries.responses('r', { text: 'ANSWER 7' }).items.map((i) => i.vignetteId)).toEqual(['v7', 'v7', 'v7', 'v7']);
    expect(store.queries.responses('r', { vignetteId: 'v3' }).items.map((i) => `${i.model}@${i.epoch}`).sort()).toEqual(['m1@1', 'm1@2', 'm2@1', 'm2@2']);
  });

  it('settles a run as failed naming its failed jobs', () => {
    const jobs = createRun(store, 'r', ['good', 'bad'], 1, 1);
    const j1 = jobs.find((j) => j.model === 'good');
    const j2 = jobs.find((j) => j.model === 'bad');
    store.runs.claimRun('r', 'me', 1000);
    const a1 = store.jobs.startAttempt(j1!.id, 'w')!;
    const a2 = store.jobs.startAttempt(j2!.id, 'w')!;
    store.records.settle({ jobId: j1!.id, attempt: a1, workerId: 'w', vignettesDone: 1, usage: { inputTokens: 1, outputTokens: 1 } }, [
      record('r', j1!.id, 'good', 1, 0, 1, 1),
    ]);
    expect(store.jobs.failJob(j2!.id, a2, 'mock: 400 Bad Request')).toBe(true);
    expect(store.jobs.failJob(j2!.id, a2, 'again')).toBe(false);
    const { run } = store.runs.settleRun('r');
    expect(run.status).toBe('failed');
    expect(run.failedCount).toBe(1);
    expect(run.error).toContain('bad@1: mock: 400 Bad Request');
  });
  it("pages one run among others: only its records, each once, and a vignette's records by key", () => {
    const a = createRun(store, 'a', ['m'], 2, 30);
    const b = createRun(store, 'b', ['m'], 1, 30);
    const attempts = new Map([...a, ...b].map((j) => [j.id, store.jobs.startAttempt(j.id, 'w')!]));
    // Interleave the runs' batches, as two runs processed at once would.
    for (let i = 0; i < 30; i += 10) {
      for (const job of [...a, ...b]) {
        store.records.append(job.id, attempts.get(job.id)!, Array.from({ length: 10 }, (_, k) => record(job.runId, job.id, 'm', job.epoch, i + k, 1, 1)));
      }
    }
    const seen: string[] = [];
    for (let cursor: number | undefined; ; ) {
      const page = store.queries.responses('a', {}, { limit: 16, ...(cursor === undefined ? {} : { cursor }) });
      seen.push(...page.items.map((r) => `${r.runId}|${r.epoch}|${r.vignetteId}`));
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    expect(seen).toHaveLength(60);
    expect(new Set(seen).size).toBe(60);
    expect(seen.every((k) => k.startsWith('a|'))).toBe(true);
    expect([...store.queries.iterateResponses('b', 0, 7)]).toHaveLength(30);
    const v = store.queries.responses('a', { vignetteId: 'v17' }).items;
    expect(v.map((r) => `${r.epoch}|${r.vignetteId}`)).toEqual(['1|v17', '2|v17']);
    expect(store.queries.responses('a', { vignetteId: 'nope' }).items).toEqual([]);
    expect(store.queries.responses('a', { vignetteId: 'v17', epoch: 2 }).items).toHaveLength(1);
  });
  it('counts a record served from the prompt cache as a call without billed tokens, its tokens counted apart', () => {
    const [job] = createRun(store, 'c', ['m'], 1, 3);
    const a = store.jobs.startAttempt(job!.id, 'w')!;
    const cached = (idx: number, input: number, output: number) => ({ ...record('c', job!.id, 'm', 1, idx, input, output), cached: true });
    store.records.append(job!.id, a, [record('c', job!.id, 'm', 1, 0, 100, 10), cached(1, 70, 7)]);
    // A record landing twice counts once, cached or not.
    store.records.append(job!.id, a, [cached(1, 70, 7), cached(2, 30, 3)]);
    expect(store.queries.usageByModel('c')).toEqual([
      { model: 'm', inputTokens: 100, outputTokens: 10, calls: 3, cachedCalls: 2, cachedInputTokens: 100, cachedOutputTokens: 10 },
    ]);
    expect(store.queries.runResults('c').map((r) => r.cached)).toEqual([false, true, true]);
  });

  it('reads a run stored under the cache option\'s former name (noStore) as skipPromptCache', () => {
    createRun(store, 'old', ['m'], 1, 1);
    const { skipPromptCache: _, ...rest } = OPTIONS;
    store.db.prepare('UPDATE runs SET options = ? WHERE id = ?').run(JSON.stringify({ ...rest, noStore: true }), 'old');
    expect(store.queries.getRun('old')!.options).toEqual({ ...OPTIONS, skipPromptCache: true });
  });
});
