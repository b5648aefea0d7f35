/**
 * A staged vignette's calls stored as each one finishes (`finished_stages`), before its record
 * lands: what lets a vignette interrupted mid-template resume from its first unfinished call.
 * A call is stored only for the job's current attempt while it runs, fenced by the run's owner
 * like every record; the transaction that lands the record moves its calls to `stage_answers`
 * (record-writes.ts), and a resumed job reads them back with its pending vignettes
 * (job-lifecycle.ts). The commit is made without its fsync: in WAL mode it survives the process
 * being killed, and a call an OS crash undoes is only posed again.
 * Runs on: Node (core).
 */
import type Database from 'better-sqlite3';
import type { JobId, StageAnswer } from '../domain.js';
import { prepareJobGuard } from './record-writes.js';
import type { RunFence } from './run-fence.js';

export interface StageProgressDeps {
  db: Database.Database;
  hold: (fence: RunFence | undefined) => void;
  withoutSync: <T>(commit: () => T) => T;
}

export class StageProgress {
  private readonly stmt;

  constructor(private readonly deps: StageProgressDeps) {
    const db = deps.db;
    this.stmt = {
      jobGuard: prepareJobGuard(db),
      // A call posed again (its earlier answer was not the one the chain went on from) replaces it.
      put: db.prepare(
        `INSERT OR REPLACE INTO finished_stages (job_id, vignette_idx, call_idx, stage, item, round, response, input_tokens,
           output_tokens, cached_tokens, reasoning_tokens, latency_ms, host, cached)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
    };
  }

  /**
   * Stores call `callIdx` of a vignette's chain for the current attempt of a running job; false
   * (nothing stored) for a stale attempt or a settled job. Throws RunLostError once the run is
   * another process's.
   */
  finish(jobId: JobId, attempt: number, vignetteIndex: number, callIdx: number, st: StageAnswer, fence?: RunFence): boolean {
    return this.deps.withoutSync(() =>
      this.deps.db
        .transaction(() => {
          this.deps.hold(fence);
          const guard = this.stmt.jobGuard.get(jobId);
          if (!guard || guard.status !== 'running' || guard.attempt !== attempt) return false;
          this.stmt.put.run(jobId, vignetteIndex, callIdx, st.stage, st.item, st.round, st.response, st.usage.inputTokens, st.usage.outputTokens,
            st.usage.cachedTokens ?? null, st.usage.reasoningTokens ?? null, Math.round(st.latencyMs), st.host, st.cached ? 1 : 0);
          return true;
        })
        .immediate(),
    );
  }
}
