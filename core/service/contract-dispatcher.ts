/**
 * The one place a contract call is served: given a method's name and its raw input, it looks the
 * method up in the contract's allowlist, validates the input once with the method's schema, lets
 * the transport's policy check what is asked (a path confined to some folders, a method a
 * transport does not serve), calls the implementation, and answers one shape: an `Envelope`, whose
 * error is a `SerializedError` naming the field. Electron's IPC, the browser bridge and the HTTP
 * API's routes are transports over it; `contractClient` is the same calls in-process, for the CLI
 * (errors thrown, not enveloped). The model is VS Code's IChannel: one call surface, many carriers.
 * Runs on: Node (core).
 */
import type { z } from 'zod';
import { PanoptesError, wireError } from '../domain.js';
import { firstIssuePath, formatZodIssues } from '../validation.js';
import { CONTRACT_INPUTS, CONTRACT_METHODS, type ControlApi, type ControlMethod, type Envelope } from './contract.js';

/** A method's input after its schema has parsed it (defaults filled in, unknown fields refused). */
export type ValidInput<M extends ControlMethod> = z.output<(typeof CONTRACT_INPUTS)[M]>;

/** What a transport adds to every call it carries: the methods it refuses, and checks on valid input. */
export interface TransportPolicy {
  /** Its name in errors ("no method X on the <name>"). */
  readonly name: string;
  /** Methods this transport does not carry; a call to one is `not_found`, as an unknown method is. */
  readonly refuses?: ReadonlySet<ControlMethod>;
  /** Checks (and may rewrite) a validated input before the call: throws a PanoptesError to refuse it. */
  admit?(method: ControlMethod, input: unknown): unknown;
  /** Told of every internal error before it is masked on the wire (the transport's logger). */
  onInternal?(err: unknown, method: string): void;
}

const IN_PROCESS: TransportPolicy = { name: 'engine' };

function isContractMethod(name: unknown): name is ControlMethod {
  return typeof name === 'string' && Object.hasOwn(CONTRACT_INPUTS, name);
}

/** Validates `input` against a method's schema; the error names the failing field and changes nothing. */
function validateInput<M extends ControlMethod>(method: M, input: unknown): ValidInput<M> {
  const schema = CONTRACT_INPUTS[method] as z.ZodType;
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const where = firstIssuePath(parsed.error);
    throw new PanoptesError('invalid_input', `${method}: ${formatZodIssues(parsed.error)}`, where ? { where } : {});
  }
  return parsed.data as ValidInput<M>;
}

export class ContractDispatcher {
  constructor(private readonly impl: ControlApi) {}

  /** The call, errors thrown as PanoptesError: unknown or refused method, invalid input, a refusal by the policy, or the engine's own. */
  async invoke(method: unknown, raw: unknown, policy: TransportPolicy = IN_PROCESS): Promise<unknown> {
    if (!isContractMethod(method) || policy.refuses?.has(method)) {
      throw new PanoptesError('not_found', `no method "${String(method)}" on the ${policy.name}`, { where: 'method' });
    }
    const valid: unknown = validateInput(method, raw);
    const input = policy.admit ? await policy.admit(method, valid) : valid;
    const call = this.impl[method] as (input: unknown) => Promise<unknown>;
    return call.call(this.impl, input);
  }

  /** The call as it crosses a transport: always resolves, to a value or to the one error shape. */
  async call(method: unknown, raw: unknown, policy: TransportPolicy = IN_PROCESS): Promise<Envelope<unknown>> {
    try {
      return { ok: true, value: await this.invoke(method, raw, policy) };
    } catch (err) {
      const error = wireError(err);
      if (error.code === 'internal') policy.onInternal?.(err, String(method));
      return { ok: false, error };
    }
  }
}

/** The contract in-process (the CLI, a host's own calls): each method validated once by the dispatcher, errors thrown. */
export function contractClient(dispatcher: ContractDispatcher): ControlApi {
  return Object.fromEntries(
    CONTRACT_METHODS.map((method) => [method, (input?: unknown) => dispatcher.invoke(method, input)]),
  ) as unknown as ControlApi;
}
