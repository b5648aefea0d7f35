/**
 * The fencing token of a run's owner. Each claim of a run stamps a fresh owner id on its row
 * (`host:pid:nonce`, a new nonce per claim), and every write the owner makes for the run — an
 * attempt started, records landed, a line appended to responses.jsonl, a job or the run settled —
 * runs in an IMMEDIATE transaction that first checks that the row still carries that id and is
 * still `running`, and extends the lease while it is there. Taking a run over needs a write of its
 * own (the lapsed run is put back in the queue, then claimed under a new id), so a stalled owner
 * that wakes up after the takeover finds its id gone in the same transaction as its write: the
 * write changes nothing and `RunLostError` tells the owner to stop. The lease decides only when
 * another process may take a run; the owner id decides who may write.
 * Runs on: Node (core).
 */
import { PanoptesError, type RunId } from '../domain.js';

export interface RunFence {
  runId: RunId;
  /** The owner id this claim stamped on the run. */
  owner: string;
  /** How long each write extends the lease. */
  leaseMs: number;
}

/** The run now belongs to another process (or was cancelled or finished): this owner must stop writing. */
export class RunLostError extends PanoptesError {
  readonly runId: RunId;

  constructor(runId: RunId) {
    super('conflict', `run ${runId} is no longer held by this process: another process took it over, or it ended`);
    this.runId = runId;
  }
}
