/**
 * A ModelClient that bills every call to a scorer version of a run before making it: the call is
 * counted in the run's usage before the request leaves, its tokens added when the answer comes, and
 * taken back out if it ends in an error that no provider billed (see core/store/billed-calls.ts):
 * an empty answer carries its tokens, and counts. The scorekeeper gives
 * one to each scorer it builds (its judges' calls) and to the retrier (its retries' calls), and the
 * engine one to its local worker (the sweep's calls to providers that bill), so `stats` and the
 * scoring usage hold every call a provider was asked, even those whose scores or records a kill -9
 * lost. A call aborted half-way stays counted: its request may have reached the provider. A
 * `panoptes worker` counts its calls in the coordinator's ledger the same way, over the wire
 * (core/service/wire-call-counter.ts): the counting is a CallCounter, the client the same.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../domain.js';
import type { ModelClient, ModelRequest, ModelResponse } from '../models/model-client.js';
import type { BilledCall, BilledCallKind, BilledCalls, CallEnd } from '../store/billed-calls.js';

/**
 * How a ledger write is made: at once, or (on a full disk) waiting for room as the page's commit
 * does; false when the wait was cut short by the signal, and the call is then not made.
 */
export type LedgerWrite = (write: () => void, signal: AbortSignal | undefined) => Promise<boolean>;

/** Where a billed client's calls are counted: the run's store, or a coordinator's over the wire. */
export interface CallCounter {
  /**
   * Counts a call about to be made: true once counted, false when the signal cut the wait short
   * (the call is then not made). Rejects when the call cannot be counted (a full disk): it is not made.
   */
  asked(call: BilledCall, signal: AbortSignal | undefined): Promise<boolean>;
  /** Says how a counted call ended. */
  ended(call: BilledCall, end: CallEnd): Promise<void>;
}

/** Counting in `ledger` (the run's store), each write made by `write`. */
export function storedCounter(ledger: BilledCalls, write: LedgerWrite): CallCounter {
  return {
    asked: (call, signal) => write(() => ledger.asked(call), signal),
    ended: async (call, end) => {
      if (end.outcome !== 'aborted') await write(() => ledger.ended(call, end), undefined);
    },
  };
}

export type BilledClientOptions = ({ ledger: BilledCalls; write: LedgerWrite } | { counter: CallCounter }) & {
  scorerId: number;
  kind: BilledCallKind;
  /** Whether a call to the model can be billed; false passes it through uncounted (default: every model). */
  bills?: ((model: string) => boolean) | undefined;
};

export function billedClient(client: ModelClient, opts: BilledClientOptions): ModelClient {
  const counter = 'counter' in opts ? opts.counter : storedCounter(opts.ledger, opts.write);
  const billed: ModelClient = {
    serves: (model) => client.serves(model),
    generate: async (request: ModelRequest): Promise<ModelResponse> => {
      if (opts.bills && !opts.bills(request.model)) return client.generate(request);
      if (request.runId === undefined) throw new PanoptesError('internal', `a ${opts.kind} call to ${request.model} names no run to bill`);
      const call = { runId: request.runId, scorerId: opts.scorerId, kind: opts.kind, model: request.model };
      if (!(await counter.asked(call, request.signal))) throw new PanoptesError('cancelled', `the ${opts.kind} call to ${request.model} was not made: it was stopped before it was counted`);
      let response: ModelResponse;
      try {
        response = await client.generate(request);
      } catch (err) {
        const billed = err instanceof PanoptesError ? err.billed : undefined;
        // Billed without an answer (empty ones): the call counted stands for one of those tries.
        const end: CallEnd = billed ? { outcome: 'billed', tries: billed } : request.signal?.aborted ? { outcome: 'aborted' } : { outcome: 'failed' };
        await counter.ended(call, end);
        throw err;
      }
      await counter.ended(call, { outcome: 'answered', answer: response, billedBefore: response.billedBefore });
      return response;
    },
  };
  if (client.unavailableReason) billed.unavailableReason = (model) => client.unavailableReason!(model);
  return billed;
}
