/**
 * A HostClient calls one provider's hosts. The router picks the host; the client speaks the
 * provider's protocol and maps its failures onto PanoptesError codes (retryable or not, and for
 * rate limits when to come back). Clients never retry: the router is the only retry loop.
 * Runs on: Node (core).
 */
import type { ResolvedHost } from '../catalog.js';
import type { ModelRequest, ModelResponse } from '../model-client.js';

export type HostResponse = Omit<ModelResponse, 'host' | 'cached'>;

export interface HostClient {
  call(host: ResolvedHost, request: ModelRequest): Promise<HostResponse>;
  close?(): Promise<void>;
}
