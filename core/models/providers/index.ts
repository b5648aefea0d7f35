/**
 * One HostClient per provider, made from its catalog entry and (for providers that need one) the
 * key the router read from the environment variable the catalog names.
 * Runs on: Node (core).
 */
import type { Provider } from '../catalog.js';
import { AnthropicHostClient } from './anthropic.js';
import { GenerateHostClient } from './generate.js';
import { GgufHostClient } from './gguf.js';
import type { HostClient } from './host-client.js';
import { MockHostClient } from './mock.js';
import { OpenAIHostClient } from './openai.js';
import { ScriptedHostClient } from './scripted.js';

export function createHostClient(name: string, provider: Provider, apiKey?: string): HostClient {
  switch (provider.kind) {
    case 'openai':
      return new OpenAIHostClient(name, provider, apiKey);
    case 'anthropic':
      return new AnthropicHostClient(name, provider, apiKey);
    case 'generate':
      return new GenerateHostClient(name, provider, apiKey);
    case 'gguf':
      return new GgufHostClient(name, provider);
    case 'mock':
      return new MockHostClient();
    case 'scripted':
      return new ScriptedHostClient();
  }
}
