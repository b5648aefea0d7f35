/**
 * A finished run written straight into a data dir's database, with no model called: vignettes
 * with one-letter targets and a `topic`, and every record answered by the known-accuracy rule
 * (the target at the model's accuracy, else a wrong letter). What re-scoring is measured and
 * tested on: a million stored records in seconds instead of a million calls.
 * Runs on: Node.
 */
import { mkdirSync } from 'node:fs';
import type { IndexedVignette, ResponseRecord } from '../core/domain.js';
import { knownAccuracyAnswer } from '../core/models/providers/known-accuracy.js';
import { databasePath } from '../core/paths.js';
import { DEFAULT_RUN_OPTIONS } from '../core/service/control-service.js';
import { Store } from '../core/store/store.js';

export interface StoredRunSpec {
  runId: string;
  vignettes: number;
  epochs: number;
  /** Each model's accuracy: one for every vignette, or by vignette index. */
  models: ReadonlyArray<{ model: string; accuracy: number | ((i: number) => number) }>;
  /** A vignette's metadata, by index (default: a `topic` of twenty). */
  metadataOf?: ((i: number) => Record<string, unknown>) | undefined;
  /** A record's latency and output tokens (default 1 ms and 1 token), by vignette index and epoch. */
  callOf?: ((i: number, epoch: number) => { latencyMs: number; outputTokens: number }) | undefined;
}

/** Records are written in transactions of this many. */
const BATCH = 10_000;

export function targetOf(i: number): string {
  return 'ABCDE'[i % 5]!;
}

/** Writes the run, its vignettes, jobs and records; returns how many records landed. */
export function writeStoredRun(dataDir: string, spec: StoredRunSpec): number {
  mkdirSync(dataDir, { recursive: true });
  const store = new Store(databasePath(dataDir));
  try {
    const { runId } = spec;
    store.runs.beginStaging(runId);
    for (let lo = 0; lo < spec.vignettes; lo += BATCH) {
      const page: IndexedVignette[] = [];
      for (let i = lo; i < Math.min(spec.vignettes, lo + BATCH); i++) {
        page.push({ index: i, id: `v${i}`, prompt: `Question ${i}: which option?`, target: targetOf(i), metadata: spec.metadataOf?.(i) ?? { topic: `t${i % 20}` } });
      }
      store.runs.stageVignettes(runId, page);
    }
    const models = spec.models.map((m) => m.model);
    store.runs.insertRun({ id: runId, manifestPath: '/stored-run.jsonl', models, epochs: spec.epochs, vignetteCount: spec.vignettes, options: DEFAULT_RUN_OPTIONS });
    store.runs.claimRun(runId, 'stored-run', 3_600_000);
    const jobs = store.jobs.insertJobs(runId, models.flatMap((model) => Array.from({ length: spec.epochs }, (_, e) => ({ model, epoch: e + 1 }))));
    let landed = 0;
    for (const job of jobs) {
      const accuracy = spec.models.find((m) => m.model === job.model)!.accuracy;
      const attempt = store.jobs.startAttempt(job.id, 'stored-run')!;
      for (let lo = 0; lo < spec.vignettes; lo += BATCH) {
        const batch: ResponseRecord[] = [];
        for (let i = lo; i < Math.min(spec.vignettes, lo + BATCH); i++) {
          const call = spec.callOf?.(i, job.epoch) ?? { latencyMs: 1, outputTokens: 1 };
          batch.push({
            runId,
            jobId: job.id,
            vignetteId: `v${i}`,
            vignetteIndex: i,
            model: job.model,
            epoch: job.epoch,
            prompt: '',
            response: knownAccuracyAnswer(job.model, `v${i}`, job.epoch, targetOf(i), typeof accuracy === 'number' ? accuracy : accuracy(i)),
            usage: { inputTokens: 8, outputTokens: call.outputTokens },
            latencyMs: call.latencyMs,
            host: `mock/${job.model}`,
            cached: false,
            sampling: {},
            finishedAt: Date.now(),
          });
        }
        landed += store.records.append(job.id, attempt, batch).length;
      }
      store.records.settle({ jobId: job.id, attempt, workerId: 'stored-run', vignettesDone: spec.vignettes, usage: { inputTokens: 0, outputTokens: 0 } });
    }
    const settled = store.runs.settleRun(runId);
    if (settled.run.status !== 'done') throw new Error(`stored run is ${settled.run.status}`);
    store.syncWal();
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    return landed;
  } finally {
    store.close();
  }
}
