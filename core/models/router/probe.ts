/**
 * What a probe of the catalog's hosts sends: the hosts of the named logical models (each model
 * checked against the catalog), and for each one short call, at most 16 output tokens (enough for
 * any host to show it answers), that skips the prompt cache and any privacy filter.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../../domain.js';
import type { Catalog, ResolvedHost } from '../catalog.js';
import type { ModelRequest } from '../model-client.js';
import type { PickRequest } from './host-picker.js';
import { roughTokens } from './token-estimate.js';

const PROBE_PROMPT = 'Reply with the single word OK.';
const PROBE_MAX_TOKENS = 16;

/** Every host of the given logical models; a model not in the catalog is an error naming it. */
export function probeTargets(catalog: Catalog, models: readonly string[]): { model: string; host: ResolvedHost }[] {
  for (const m of models) {
    if (!catalog.has(m)) {
      throw new PanoptesError('invalid_input', `cannot probe "${m}": not in the catalog (it has: ${catalog.modelIds().join(', ')})`, {
        where: 'models',
      });
    }
  }
  return models.flatMap((model) => catalog.hosts(model).map((host) => ({ model, host })));
}

/** The probe call to one logical model under `profile`, and what it asks of a host. */
export function probeCall(model: string, profile: string, signal: AbortSignal | undefined): { request: ModelRequest; pick: PickRequest } {
  const request: ModelRequest = {
    model,
    messages: [{ role: 'user', content: PROBE_PROMPT }],
    sampling: { maxTokens: PROBE_MAX_TOKENS },
    privacy: 'off',
    skipPromptCache: true,
    epoch: 1,
    ...(signal ? { signal } : {}),
  };
  const pick: PickRequest = {
    profile,
    privacy: 'off',
    promptTokens: 0,
    maxOutput: PROBE_MAX_TOKENS,
    estimate: { inputTokens: roughTokens(request), outputTokens: PROBE_MAX_TOKENS },
  };
  return { request, pick };
}
