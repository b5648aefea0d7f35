/**
 * RemoteCallLedger: the coordinator's side of protocol 5's billed calls, for one worker
 * connection. A `call_asked` for a job this connection holds at that attempt — a sweep call to the
 * job's model, or a call of its staged template's judge loop — is counted in the run's ledger
 * (sweep_usage; judge_usage under TEMPLATE_JUDGE_SCORER_ID) and answered `call_counted` once
 * committed, and only then does the worker make it. Every connection's ledger writes share one
 * commit per event-loop turn (writePerTurnOrRefuse), so a flood of tiny frames costs a commit a
 * turn, not one a frame. Anything else is answered `call_refused` naming why, and the connection
 * goes on: a job it does not hold (or no longer: a call after a cancel), a model the job does not
 * pose, a judge call for a job with no judge loop, an id asked twice, more than
 * MAX_OUTSTANDING_CALLS counted and not ended, a full disk (the call is then not made). A
 * `call_ended` settles a counted call as billedClient does locally (an error no provider billed is
 * taken back out, tries billed empty added); one for a call not outstanding is refused by name.
 * A connection lost leaves its outstanding calls counted: their requests may have left.
 * Runs on: Node (core).
 */
import type { Logger } from 'pino';
import { toPanoptesError, type ErrorCode, type EvalJob } from '../domain.js';
import { BilledCalls, TEMPLATE_JUDGE_SCORER_ID, writePerTurnOrRefuse, type BilledCall } from '../store/billed-calls.js';
import type { Store } from '../store/store.js';
import { billsJudgeCalls, type ConnectionCalls, type ConnectionCallsFactory } from '../remote/call-counting.js';
import type { CallAskedMessage, CallCountedMessage, CallEndedMessage, CallRefusedMessage } from '../remote/messages.js';

/** Calls one connection may have counted and not ended: far above any worker's call concurrency. */
export const MAX_OUTSTANDING_CALLS = 4096;

/** The run store's ledger as every connection of a listener writes it: one commit per turn for all. */
interface CoordinatorLedger {
  calls: BilledCalls;
  write: (commit: () => void) => Promise<boolean>;
}

/** The listener's ConnectionCalls factory over `store`: every connection's writes share one per-turn commit. */
export function remoteCallLedgers(store: Store): ConnectionCallsFactory {
  const ledger: CoordinatorLedger = { calls: new BilledCalls(store), write: writePerTurnOrRefuse(store, "counting a remote worker's call") };
  return (send, logger) => new RemoteCallLedger(ledger, send, logger);
}

export class RemoteCallLedger implements ConnectionCalls {
  private readonly outstanding = new Map<number, BilledCall>();
  /** The last ledger write queued: the per-turn commit writes in order, so once it settles, every earlier one has. */
  private lastWrite: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ledger: CoordinatorLedger,
    private readonly send: (message: CallCountedMessage | CallRefusedMessage) => void,
    private readonly logger: Logger,
  ) {}

  /** Calls counted (or being counted) and not ended. */
  get size(): number {
    return this.outstanding.size;
  }

  written(): Promise<void> {
    return this.lastWrite.then(
      () => undefined,
      () => undefined,
    );
  }

  /** `job`: the job this connection holds at the frame's job id and attempt, or null. */
  asked(m: CallAskedMessage, job: EvalJob | null): void {
    const why = this.refusal(m, job);
    if (why !== null) return this.refuse(m.call_id, 'bad_request', why);
    const call: BilledCall = { runId: job!.runId, scorerId: m.kind === 'judge' ? TEMPLATE_JUDGE_SCORER_ID : 0, kind: m.kind, model: m.model };
    this.outstanding.set(m.call_id, call);
    this.lastWrite = this.ledger.write(() => this.ledger.calls.asked(call));
    this.lastWrite.then(
      () => this.send({ type: 'call_counted', call_id: m.call_id }),
      (err: unknown) => {
        this.outstanding.delete(m.call_id);
        const e = toPanoptesError(err);
        this.refuse(m.call_id, e.code, e.message, e.retryable);
      },
    );
  }

  ended(m: CallEndedMessage): void {
    const call = this.outstanding.get(m.call_id);
    if (call === undefined) return this.refuse(m.call_id, 'bad_request', `call ${m.call_id} is not outstanding on this connection`);
    this.outstanding.delete(m.call_id);
    this.lastWrite = this.ledger.write(() => this.ledger.calls.ended(call, m.end));
    this.lastWrite.catch((err: unknown) => {
      this.logger.warn({ run_id: call.runId, model: call.model, err: toPanoptesError(err).message }, "a remote worker's call end was not written");
    });
  }

  private refusal(m: CallAskedMessage, job: EvalJob | null): string | null {
    const what = `call ${m.call_id}`;
    if (this.outstanding.has(m.call_id)) return `${what} was asked already`;
    if (job === null) return `${what} names job ${m.job_id} attempt ${m.attempt}, which this worker does not hold`;
    if (m.kind === 'sweep' && m.model !== job.model) return `${what} is a sweep call to ${m.model} for job ${m.job_id}, which poses ${job.model}`;
    if (m.kind === 'judge' && !billsJudgeCalls(job.options)) {
      return `${what} is a judge call for job ${m.job_id}, whose template has no judge loop`;
    }
    if (this.outstanding.size >= MAX_OUTSTANDING_CALLS) return `${what} would be over ${MAX_OUTSTANDING_CALLS} calls counted and not ended on this connection`;
    return null;
  }

  private refuse(callId: number, code: ErrorCode, message: string, retryable = false): void {
    this.send({ type: 'call_refused', call_id: callId, error: { code, message: message.slice(0, 4000), retryable } });
  }
}
