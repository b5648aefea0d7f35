/**
 * The `openai` provider: any OpenAI-compatible chat-completions endpoint (OpenAI, OpenRouter, Groq,
 * Google's OpenAI-compatible Gemini endpoint, NVIDIA NIM, GitHub Models, vLLM, Ollama, LM Studio) on
 * the openai SDK, with the SDK's own retries off and an explicit timeout: the router is the only
 * retry loop. The SDK sends through `nodeFetch` (keep-alive node:http, see http-transport.ts).
 * Provider options:
 *   maxTokensField   `max_tokens` (default; what most compatible servers take) or
 *                    `max_completion_tokens` (OpenAI's reasoning models refuse `max_tokens`)
 *   headers          extra request headers (e.g. OpenRouter's HTTP-Referer / X-Title)
 * Runs on: Node (core).
 */
import type OpenAI from 'openai';
import { z } from 'zod';
import type { Usage } from '../../domain.js';
import type { Provider, ResolvedHost } from '../catalog.js';
import type { ModelRequest } from '../model-client.js';
import { callSignal } from './call-signal.js';
import { failureFromSdk } from './failures.js';
import type { HostClient, HostResponse } from './host-client.js';
import { nodeFetch } from './http-transport.js';
import { parseProviderOptions } from './options.js';

export const OpenAIOptionsSchema = z
  .object({
    maxTokensField: z.enum(['max_tokens', 'max_completion_tokens']).default('max_tokens'),
    headers: z.record(z.string(), z.string()).optional(),
  })
  .strict();

export const DEFAULT_TIMEOUT_MS = 60_000;

/** OpenAI's usage block, normalised: cached prompt tokens and reasoning tokens where reported. */
export function openaiUsage(u: OpenAI.CompletionUsage | undefined | null): Usage {
  const usage: Usage = { inputTokens: u?.prompt_tokens ?? 0, outputTokens: u?.completion_tokens ?? 0 };
  const cached = u?.prompt_tokens_details?.cached_tokens;
  const reasoning = u?.completion_tokens_details?.reasoning_tokens;
  if (cached) usage.cachedTokens = cached;
  if (reasoning) usage.reasoningTokens = reasoning;
  return usage;
}

export class OpenAIHostClient implements HostClient {
  private readonly clientOptions: NonNullable<ConstructorParameters<typeof OpenAI>[0]>;
  private sdk: Promise<{ SDK: typeof OpenAI; client: OpenAI }> | undefined;
  private readonly secrets: string[];
  private readonly maxTokensField: 'max_tokens' | 'max_completion_tokens';

  constructor(name: string, provider: Provider, apiKey: string | undefined) {
    const opts = parseProviderOptions(OpenAIOptionsSchema, provider.options, `providers.${name}.options`);
    this.maxTokensField = opts.maxTokensField;
    this.secrets = apiKey ? [apiKey] : [];
    this.clientOptions = {
      // Local servers (Ollama, vLLM, LM Studio) take no key, but the SDK insists on one.
      apiKey: apiKey ?? 'no-key',
      baseURL: provider.baseUrl ?? 'https://api.openai.com/v1',
      maxRetries: 0,
      timeout: provider.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      fetch: nodeFetch,
      ...(opts.headers ? { defaultHeaders: opts.headers } : {}),
    };
  }

  /** The SDK loads on the first call: it costs a few hundred ms at start-up, and most runs never use it. */
  private loadSdk(): Promise<{ SDK: typeof OpenAI; client: OpenAI }> {
    this.sdk ??= import('openai').then(({ default: SDK }) => ({ SDK, client: new SDK(this.clientOptions) }));
    return this.sdk;
  }

  async call(host: ResolvedHost, request: ModelRequest): Promise<HostResponse> {
    const s = request.sampling;
    const body: OpenAI.ChatCompletionCreateParamsNonStreaming = {
      model: host.model,
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
      ...(s.temperature === undefined ? {} : { temperature: s.temperature }),
      ...(s.topP === undefined ? {} : { top_p: s.topP }),
      ...(s.maxTokens === undefined ? {} : { [this.maxTokensField]: s.maxTokens }),
      ...(s.seed === undefined ? {} : { seed: s.seed }),
      ...(s.stop === undefined || s.stop.length === 0 ? {} : { stop: s.stop }),
      ...(s.reasoningEffort === undefined ? {} : { reasoning_effort: s.reasoningEffort }),
    };
    const { SDK, client } = await this.loadSdk();
    const started = performance.now();
    const call = callSignal(request.signal);
    let res: OpenAI.ChatCompletion;
    try {
      res = await client.chat.completions.create(body, { signal: call.signal });
    } catch (err) {
      throw failureFromSdk(host.id, err, SDK, this.secrets);
    } finally {
      call.release();
    }
    const choice = res.choices?.[0];
    const out: HostResponse = {
      text: choice?.message?.content ?? '',
      usage: openaiUsage(res.usage),
      latencyMs: performance.now() - started,
    };
    if (choice?.finish_reason) out.finishReason = choice.finish_reason;
    return out;
  }
}
