/**
 * One HostClient per provider, made from its catalog entry.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../../domain.js';
import type { Provider } from '../catalog.js';
import type { HostClient } from './host-client.js';
import { MockHostClient } from './mock.js';

export function createHostClient(name: string, provider: Provider): HostClient {
  switch (provider.kind) {
    case 'mock':
      return new MockHostClient();
    default:
      throw new PanoptesError('invalid_input', `provider "${name}": kind "${provider.kind}" is not available in this build`, {
        where: `providers.${name}.kind`,
      });
  }
}
