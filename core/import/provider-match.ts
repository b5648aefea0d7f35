/**
 * A promptfoo provider id (`openai:gpt-4.1`, `anthropic:messages:claude-sonnet-4-5`,
 * `ollama:chat:llama3:8b`) as the catalog model that serves it: a catalog id equal to the whole
 * id or to its model part, else the model whose host has that provider kind and provider model id.
 * Runs on: Node (core).
 */
import type { Catalog } from '../models/catalog.js';

const API_STYLES = new Set(['chat', 'completion', 'messages', 'responses']);

export function catalogModelFor(catalog: Catalog, providerId: string): string | undefined {
  if (catalog.has(providerId)) return providerId;
  const [kind, ...rest] = providerId.split(':');
  while (rest.length > 1 && API_STYLES.has(rest[0]!)) rest.shift();
  const model = rest.join(':');
  if (model === '') return undefined;
  if (catalog.has(model)) return model;
  const ids = catalog.modelIds();
  const hosted = (sameKind: boolean) =>
    ids.find((id) => catalog.hosts(id).some((h) => h.model === model && (!sameKind || h.providerConfig.kind === kind)));
  return hosted(true) ?? hosted(false);
}
