/**
 * WireCallCounter: how a `panoptes worker` counts its billed calls in the coordinator's ledger
 * (protocol 5). Each call to a provider that bills (a sweep call, a template judge loop's call) is
 * asked of the coordinator in a `call_asked` frame naming a job of the call's run that this
 * connection holds, and made only once the coordinator answers `call_counted`; a `call_refused`
 * fails the call unmade (a full disk names the coordinator's database, as it would locally). How
 * the call ended follows in `call_ended`, so the coordinator takes back an error no provider billed
 * and adds tries billed without an answer, as billedClient does against a local store. A call cut
 * short while it waits to be counted is not made, and if it is counted after all, taken back out
 * at once. A connection lost leaves its calls counted: their requests may have left.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../domain.js';
import type { Catalog } from '../models/catalog.js';
import type { ModelClient } from '../models/model-client.js';
import type { CountingChannel, WorkerCallCounting } from '../remote/call-counting.js';
import { MAX_BILLED_TRIES, MAX_CALL_TOKENS, type CallCountedMessage, type CallEndedMessage, type CallRefusedMessage } from '../remote/messages.js';
import { billedClient, type CallCounter } from '../scoring/billed-client.js';
import type { CallBilling } from '../scoring/scorer-registry.js';
import { TEMPLATE_JUDGE_SCORER_ID, type BilledCall, type CallEnd } from '../store/billed-calls.js';
import { billsByCatalog } from './sweep-billing.js';

interface Asking {
  call: BilledCall;
  channel: CountingChannel;
  /** The call's signal aborted while it waited: it is not made, and taken back out if counted. */
  abandoned: boolean;
  settle(counted: boolean): void;
  fail(err: PanoptesError): void;
}

const clip = (n: number, max: number) => Math.min(Math.max(0, Math.round(n)), max);

/** A CallEnd within the wire's bounds. */
function wireEnd(end: CallEnd): CallEndedMessage['end'] {
  const tries = (t: { calls: number; inputTokens: number; outputTokens: number }) => ({
    calls: clip(t.calls, MAX_BILLED_TRIES),
    inputTokens: clip(t.inputTokens, MAX_CALL_TOKENS),
    outputTokens: clip(t.outputTokens, MAX_CALL_TOKENS),
  });
  switch (end.outcome) {
    case 'answered': {
      const usage = { inputTokens: clip(end.answer.usage.inputTokens, MAX_CALL_TOKENS), outputTokens: clip(end.answer.usage.outputTokens, MAX_CALL_TOKENS) };
      return { outcome: 'answered', answer: { usage, cached: end.answer.cached }, ...(end.billedBefore ? { billedBefore: tries(end.billedBefore) } : {}) };
    }
    case 'billed':
      return { outcome: 'billed', tries: tries(end.tries) };
    default:
      return { outcome: end.outcome };
  }
}

export class WireCallCounter implements CallCounter, WorkerCallCounting {
  private channel: CountingChannel | null = null;
  private nextId = 1;
  private readonly asking = new Map<number, Asking>();
  /** Counted calls not ended yet: their id, and the connection that counted them (billedClient ends the very object it asked). */
  private readonly counted = new WeakMap<BilledCall, { id: number; channel: CountingChannel }>();

  /** Counts over `channel` from now on (a registered connection). */
  attach(channel: CountingChannel): void {
    this.channel = channel;
  }

  /** The connection is gone: calls waiting to be counted fail unmade (their jobs fail over with it). */
  detach(channel: CountingChannel, reason: string): void {
    if (this.channel === channel) this.channel = null;
    for (const [id, a] of this.asking) {
      if (a.channel !== channel) continue;
      this.asking.delete(id);
      a.fail(new PanoptesError('worker_lost', `the ${a.call.kind} call to ${a.call.model} was not made: the connection to the coordinator closed (${reason})`, { retryable: true }));
    }
  }

  asked(call: BilledCall, signal: AbortSignal | undefined): Promise<boolean> {
    const channel = this.channel;
    if (channel === null) {
      return Promise.reject(new PanoptesError('worker_lost', `the ${call.kind} call to ${call.model} was not made: no coordinator to count it`, { retryable: true }));
    }
    if (signal?.aborted) return Promise.resolve(false);
    const job = channel.jobOf(call);
    if (job === null || call.kind === 'retry') {
      return Promise.reject(new PanoptesError('internal', `a ${call.kind} call to ${call.model} for run ${call.runId}, which no job on this worker poses`));
    }
    const id = this.nextId++;
    return new Promise<boolean>((resolve, reject) => {
      const onAbort = () => {
        entry.abandoned = true;
        resolve(false);
      };
      const entry: Asking = {
        call,
        channel,
        abandoned: false,
        settle: (counted) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(counted);
        },
        fail: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      this.asking.set(id, entry);
      signal?.addEventListener('abort', onAbort, { once: true });
      channel.send({ type: 'call_asked', call_id: id, job_id: job.jobId, attempt: job.attempt, kind: call.kind as 'sweep' | 'judge', model: call.model });
    });
  }

  ended(call: BilledCall, end: CallEnd): Promise<void> {
    const counted = this.counted.get(call);
    this.counted.delete(call);
    // A call counted over a connection since lost stays counted: nothing more to say of it.
    if (counted && counted.channel === this.channel) counted.channel.send({ type: 'call_ended', call_id: counted.id, end: wireEnd(end) });
    return Promise.resolve();
  }

  /** The coordinator's answer to a `call_asked`; false when no call waits for it (a refused `call_ended`). */
  answer(message: CallCountedMessage | CallRefusedMessage): boolean {
    const entry = this.asking.get(message.call_id);
    if (!entry) return false;
    this.asking.delete(message.call_id);
    if (message.type === 'call_refused') {
      const e = message.error;
      entry.fail(new PanoptesError(e.code, `the coordinator did not count the ${entry.call.kind} call to ${entry.call.model}, which was not made: ${e.message}`, { retryable: e.retryable, retryAfterMs: e.retry_after_ms }));
      return true;
    }
    if (entry.abandoned) entry.channel.send({ type: 'call_ended', call_id: message.call_id, end: { outcome: 'failed' } });
    else this.counted.set(entry.call, { id: message.call_id, channel: entry.channel });
    entry.settle(!entry.abandoned);
    return true;
  }
}

/**
 * A `panoptes worker`'s billing, by its own catalog: its sweep calls to models a provider bills
 * (`billsByCatalog`: calls to local kinds skip the round trip) and every call of a template's judge
 * loop (as locally), each counted by the coordinator through `counter` before it is made.
 */
export function workerBilling(catalog: Catalog): { counter: WireCallCounter; sweep: (client: ModelClient) => ModelClient; judge: CallBilling } {
  const counter = new WireCallCounter();
  return {
    counter,
    sweep: (client) => billedClient(client, { counter, scorerId: 0, kind: 'sweep', bills: billsByCatalog(catalog) }),
    judge: (client) => billedClient(client, { counter, scorerId: TEMPLATE_JUDGE_SCORER_ID, kind: 'judge' }),
  };
}
