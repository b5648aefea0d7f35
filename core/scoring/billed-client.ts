/**
 * A ModelClient that bills every call to a scorer version of a run before making it: the call is
 * counted in the run's usage before the request leaves, its tokens added when the answer comes, and
 * taken back out if it ends in an error that no provider billed (see core/store/billed-calls.ts):
 * an empty answer carries its tokens, and counts. The scorekeeper gives
 * one to each scorer it builds (its judges' calls) and to the retrier (its retries' calls), and the
 * engine one to its local worker (the sweep's calls to providers that bill), so `stats` and the
 * scoring usage hold every call a provider was asked, even those whose scores or records a kill -9
 * lost. A call aborted half-way stays counted: its request may have reached the provider.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../domain.js';
import type { ModelClient, ModelRequest, ModelResponse } from '../models/model-client.js';
import type { BilledCallKind, BilledCalls } from '../store/billed-calls.js';

/**
 * How a ledger write is made: at once, or (on a full disk) waiting for room as the page's commit
 * does; false when the wait was cut short by the signal, and the call is then not made.
 */
export type LedgerWrite = (write: () => void, signal: AbortSignal | undefined) => Promise<boolean>;

export interface BilledClientOptions {
  ledger: BilledCalls;
  scorerId: number;
  kind: BilledCallKind;
  write: LedgerWrite;
  /** Whether a call to the model can be billed; false passes it through uncounted (default: every model). */
  bills?: (model: string) => boolean;
}

export function billedClient(client: ModelClient, opts: BilledClientOptions): ModelClient {
  const billed: ModelClient = {
    serves: (model) => client.serves(model),
    generate: async (request: ModelRequest): Promise<ModelResponse> => {
      if (opts.bills && !opts.bills(request.model)) return client.generate(request);
      if (request.runId === undefined) throw new PanoptesError('internal', `a ${opts.kind} call to ${request.model} names no run to bill`);
      const call = { runId: request.runId, scorerId: opts.scorerId, kind: opts.kind, model: request.model };
      if (!(await opts.write(() => opts.ledger.asked(call), request.signal))) throw new PanoptesError('cancelled', `the ${opts.kind} call to ${request.model} was not made: scoring stopped`);
      let response: ModelResponse;
      try {
        response = await client.generate(request);
      } catch (err) {
        const billed = err instanceof PanoptesError ? err.billed : undefined;
        // Billed without an answer (empty ones): the call counted stands for one of those tries.
        if (billed) await opts.write(() => opts.ledger.billedTries(call, { ...billed, calls: billed.calls - 1 }), undefined);
        else if (!request.signal?.aborted) await opts.write(() => opts.ledger.failed(call), undefined);
        throw err;
      }
      await opts.write(() => {
        opts.ledger.answered(call, response);
        if (response.billedBefore) opts.ledger.billedTries(call, response.billedBefore);
      }, undefined);
      return response;
    },
  };
  if (client.unavailableReason) billed.unavailableReason = (model) => client.unavailableReason!(model);
  return billed;
}
