/**
 * The router: a ModelClient over the catalog. A call names a logical model; the router tries its
 * hosts in catalog order, skipping hosts the privacy mode forbids, and fails over to the next host
 * on a retryable failure or an empty answer.
 * Runs on: Node (core).
 */
import { PanoptesError, toPanoptesError } from '../../domain.js';
import type { Catalog, ResolvedHost } from '../catalog.js';
import type { ModelClient, ModelRequest, ModelResponse } from '../model-client.js';
import type { HostClient } from '../providers/host-client.js';
import { createHostClient } from '../providers/index.js';

export interface RouterOptions {
  catalog: Catalog;
  /** Builds the client for a provider (tests inject fakes for hosts outside the machine). */
  hostClientFor?: (providerName: string) => HostClient;
}

export class Router implements ModelClient {
  readonly catalog: Catalog;
  private readonly clients = new Map<string, HostClient>();
  private readonly hostClientFor: (providerName: string) => HostClient;

  constructor(opts: RouterOptions) {
    this.catalog = opts.catalog;
    this.hostClientFor =
      opts.hostClientFor ?? ((name) => createHostClient(name, this.catalog.data.providers[name]!));
  }

  serves(model: string): boolean {
    return this.catalog.has(model);
  }

  private clientFor(host: ResolvedHost): HostClient {
    let client = this.clients.get(host.provider);
    if (!client) {
      client = this.hostClientFor(host.provider);
      this.clients.set(host.provider, client);
    }
    return client;
  }

  async generate(request: ModelRequest): Promise<ModelResponse> {
    const hosts = this.catalog.hosts(request.model);
    if (hosts.length === 0) {
      throw new PanoptesError('no_host', `model "${request.model}" is not in the catalog`, { where: 'model' });
    }
    const eligible = request.privacy === 'strict' ? hosts.filter((h) => h.privacySafe) : hosts;
    if (eligible.length === 0) {
      throw new PanoptesError(
        'privacy_blocked',
        `every host of "${request.model}" may train on or log prompts; privacy mode "strict" refuses them`,
      );
    }
    const ordered =
      request.privacy === 'fallback' ? [...eligible.filter((h) => h.privacySafe), ...eligible.filter((h) => !h.privacySafe)] : eligible;
    let last: PanoptesError | undefined;
    for (const host of ordered) {
      request.signal?.throwIfAborted();
      try {
        const res = await this.clientFor(host).call(host, request);
        if (res.text.trim() === '') {
          throw new PanoptesError('empty_output', `${host.id} answered with empty output`, { retryable: true });
        }
        return { ...res, host: host.id, cached: false };
      } catch (err) {
        last = toPanoptesError(err);
        if (request.signal?.aborted) throw last;
        // A host's own failure (throttled, down, refused our key) says nothing of the next host.
        if (!last.retryable && last.code !== 'auth' && last.code !== 'quota') throw last;
      }
    }
    throw last!;
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((c) => c.close?.()));
    this.clients.clear();
  }
}
