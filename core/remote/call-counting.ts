/**
 * The seams of protocol 5's billed calls on both ends of a connection: what a RemoteWorker hands
 * a worker's `call_asked` and `call_ended` frames to (ConnectionCalls, made per connection by the
 * service: core/service/remote-call-ledger.ts), and what a WorkerAgent's session lends its
 * connection to (WorkerCallCounting: core/service/wire-call-counter.ts). The ledger lives in the
 * store, above this layer: the hosts wire it in.
 * Runs on: Node (core).
 */
import type { Logger } from 'pino';
import type { EvalJob, JobOptions } from '../domain.js';
import type { CallAskedMessage, CallCountedMessage, CallEndedMessage, CallRefusedMessage } from './messages.js';

/** The coordinator's counting of one connection's billed calls. */
export interface ConnectionCalls {
  /** `job`: the job the connection holds at the frame's job id and attempt, or null. Answers with `call_counted` or `call_refused`. */
  asked(message: CallAskedMessage, job: EvalJob | null): void;
  ended(message: CallEndedMessage): void;
  /** Settles once every ledger write queued so far is committed (or failed): a job's result waits for its calls' ends. */
  written(): Promise<void>;
}

/** Makes one connection's ConnectionCalls, answering through `send`. */
export type ConnectionCallsFactory = (send: (message: CallCountedMessage | CallRefusedMessage) => void, logger: Logger) => ConnectionCalls;

/** What a worker's counter needs of the connection it counts over. */
export interface CountingChannel {
  send(message: CallAskedMessage | CallEndedMessage): void;
  /**
   * A job this connection holds that the call serves (any one, when several do): of the call's run,
   * posing its model (a sweep call) or with a judge loop (a judge call); null when none does.
   */
  jobOf(call: { runId: string; kind: string; model: string }): { jobId: number; attempt: number } | null;
}

/** A worker's counter as its sessions see it: each registered connection attached, then detached when it closes. */
export interface WorkerCallCounting {
  attach(channel: CountingChannel): void;
  detach(channel: CountingChannel, reason: string): void;
  /** The coordinator's answer to a `call_asked`; false when no call waits for it (a refused `call_ended`). */
  answer(message: CallCountedMessage | CallRefusedMessage): boolean;
}

/** Whether a job's calls include a judge loop's (its template has one): only then does it bill judge calls. */
export function billsJudgeCalls(options: JobOptions): boolean {
  return options.template?.stages.some((s) => s.judge !== undefined) ?? false;
}
