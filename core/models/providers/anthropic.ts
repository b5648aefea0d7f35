/**
 * The `anthropic` provider: the Messages API on @anthropic-ai/sdk, with the SDK's retries off and an
 * explicit timeout (the router is the only retry loop), sending through `nodeFetch`. System
 * messages become the `system` field; `max_tokens` is required by the API: the router always sets
 * one (the run's, else the provider's `maxOutputTokens`), plus the thinking budget when the run sets
 * one (`thinking.budget_tokens`: thinking counts against `max_tokens`). Input tokens are normalised to include prompt-cache reads and writes
 * (Anthropic reports them apart).
 * Runs on: Node (core).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import type { Usage } from '../../domain.js';
import { DEFAULT_MAX_OUTPUT_TOKENS, type Provider, type ResolvedHost } from '../catalog.js';
import type { ModelRequest } from '../model-client.js';
import { callSignal } from './call-signal.js';
import { failureFromSdk } from './failures.js';
import type { HostClient, HostResponse } from './host-client.js';
import { nodeFetch } from './http-transport.js';
import { DEFAULT_TIMEOUT_MS } from './openai.js';
import { parseProviderOptions } from './options.js';

export const AnthropicOptionsSchema = z.object({}).strict();

export function anthropicUsage(u: Anthropic.Usage | undefined): Usage {
  const read = u?.cache_read_input_tokens ?? 0;
  const written = u?.cache_creation_input_tokens ?? 0;
  const usage: Usage = { inputTokens: (u?.input_tokens ?? 0) + read + written, outputTokens: u?.output_tokens ?? 0 };
  if (read) usage.cachedTokens = read;
  return usage;
}

export class AnthropicHostClient implements HostClient {
  private readonly clientOptions: NonNullable<ConstructorParameters<typeof Anthropic>[0]>;
  private sdk: Promise<{ SDK: typeof Anthropic; client: Anthropic }> | undefined;
  private readonly secrets: string[];

  constructor(name: string, provider: Provider, apiKey: string | undefined) {
    parseProviderOptions(AnthropicOptionsSchema, provider.options, `providers.${name}.options`);
    this.secrets = apiKey ? [apiKey] : [];
    this.clientOptions = {
      // A local proxy may take no key, but the SDK insists on one.
      apiKey: apiKey ?? 'no-key',
      ...(provider.baseUrl ? { baseURL: provider.baseUrl } : {}),
      maxRetries: 0,
      timeout: provider.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      fetch: nodeFetch,
    };
  }

  /** The SDK loads on the first call: it costs a few hundred ms at start-up, and most runs never use it. */
  private loadSdk(): Promise<{ SDK: typeof Anthropic; client: Anthropic }> {
    this.sdk ??= import('@anthropic-ai/sdk').then(({ default: SDK }) => ({ SDK, client: new SDK(this.clientOptions) }));
    return this.sdk;
  }

  async call(host: ResolvedHost, request: ModelRequest): Promise<HostResponse> {
    const s = request.sampling;
    const system = request.messages
      .filter((m) => m.role === 'system')
      .map((m) => m.content)
      .join('\n\n');
    const body: Anthropic.MessageCreateParamsNonStreaming = {
      model: host.model,
      // Thinking counts against max_tokens, which must exceed the budget: the answer's cap comes on top of it.
      max_tokens: (s.maxTokens ?? DEFAULT_MAX_OUTPUT_TOKENS) + (s.thinkingBudget ?? 0),
      messages: request.messages
        .filter((m) => m.role !== 'system')
        .map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content })),
      ...(system ? { system } : {}),
      ...(s.temperature === undefined ? {} : { temperature: s.temperature }),
      ...(s.topP === undefined ? {} : { top_p: s.topP }),
      ...(s.stop === undefined || s.stop.length === 0 ? {} : { stop_sequences: s.stop }),
      ...(s.thinkingBudget === undefined ? {} : { thinking: { type: 'enabled', budget_tokens: s.thinkingBudget } }),
    };
    const { SDK, client } = await this.loadSdk();
    const started = performance.now();
    const call = callSignal(request.signal);
    let res: Anthropic.Message;
    try {
      res = await client.messages.create(body, { signal: call.signal });
    } catch (err) {
      throw failureFromSdk(host.id, err, SDK, this.secrets);
    } finally {
      call.release();
    }
    const text = (res.content ?? [])
      .filter((b): b is Anthropic.TextBlock => b.type === 'text')
      .map((b) => b.text)
      .join('');
    const out: HostResponse = { text, usage: anthropicUsage(res.usage), latencyMs: performance.now() - started };
    if (res.stop_reason) out.finishReason = res.stop_reason;
    return out;
  }
}
