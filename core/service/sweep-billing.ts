/**
 * How the sweep's calls are billed in `store`: each call to a model a provider bills is counted in
 * the run's sweep usage before its request leaves (its tokens are its record's) and taken back out
 * when it ends in an error (core/store/billed-calls.ts), so `stats` counts the calls a
 * kill -9 cut off before their records landed. A full disk fails the call before it is made.
 * Calls to models served only in this process or on this machine (the mock and scripted models, a
 * local GGUF file) bill nobody and are not counted: they stay free of the ledger's commit a call,
 * which would otherwise be a large part of the engine's cost at a million calls a sweep.
 * A `panoptes worker` decides the same with its own catalog (`billsByCatalog`: the worker alone
 * knows its hosts' kinds) and counts its billed calls in the coordinator's ledger over the wire.
 * Runs on: Node (core).
 */
import type { Catalog } from '../models/catalog.js';
import type { ModelClient } from '../models/model-client.js';
import { billedClient } from '../scoring/billed-client.js';
import { BilledCalls, writePerTurnOrRefuse } from '../store/billed-calls.js';
import type { Store } from '../store/store.js';

/** Provider kinds that answer on this machine: no one bills their calls. */
const LOCAL_KINDS: ReadonlySet<string> = new Set(['mock', 'scripted', 'gguf']);

/** Whether a call to a model of `catalog` can be billed: some host of it is not a local kind. */
export function billsByCatalog(catalog: Catalog): (model: string) => boolean {
  const billable = new Map<string, boolean>();
  return (model) => {
    let b = billable.get(model);
    if (b === undefined) {
      b = catalog.hosts(model).some((host) => !LOCAL_KINDS.has(host.providerConfig.kind));
      billable.set(model, b);
    }
    return b;
  };
}

export function sweepBilling(store: Store, catalog: Catalog): (client: ModelClient) => ModelClient {
  const ledger = new BilledCalls(store);
  const bills = billsByCatalog(catalog);
  // One commit a turn for the calls asked in it: on a fast provider, a commit a call cost 16 % of the calls a second.
  const write = writePerTurnOrRefuse(store, "counting a sweep's call");
  return (client) => billedClient(client, { ledger, scorerId: 0, kind: 'sweep', write, bills });
}
