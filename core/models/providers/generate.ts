/**
 * The `generate` provider: the original coordinator's plain HTTP model endpoint, `POST {baseUrl}/v1/generate`.
 *   request   {model, prompt, system?, messages, max_tokens?, temperature?, top_p?, seed?, stop?}
 *             (`prompt` is the last user message, `system` the system messages joined; `messages`
 *             carries the whole conversation for servers that want it)
 *   response  {text, usage: {input_tokens, output_tokens}, finish_reason?}
 * A bearer key is sent when the catalog names one. No retries here: the router is the retry loop.
 * Runs on: Node (core).
 */
import { z } from 'zod';
import type { Provider, ResolvedHost } from '../catalog.js';
import type { ModelRequest } from '../model-client.js';
import { callSignal } from './call-signal.js';
import { failureFromHttp, failureFromNetwork, ProviderFailure } from './failures.js';
import type { HostClient, HostResponse } from './host-client.js';
import { nodeFetch } from './http-transport.js';
import { DEFAULT_TIMEOUT_MS } from './openai.js';

export const GenerateResponseSchema = z.object({
  text: z.string(),
  usage: z.object({ input_tokens: z.number().int().nonnegative(), output_tokens: z.number().int().nonnegative() }),
  finish_reason: z.string().optional(),
});

export class GenerateHostClient implements HostClient {
  private readonly url: string;
  private readonly timeoutMs: number;
  private readonly headers: Record<string, string>;
  private readonly secrets: string[];

  constructor(name: string, provider: Provider, apiKey: string | undefined) {
    if (!provider.baseUrl) {
      throw new ProviderFailure('bad_request', `provider "${name}": kind "generate" needs a baseUrl`, { retryable: false });
    }
    this.url = `${provider.baseUrl.replace(/\/+$/, '')}/v1/generate`;
    this.timeoutMs = provider.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.headers = { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) };
    this.secrets = apiKey ? [apiKey] : [];
  }

  async call(host: ResolvedHost, request: ModelRequest): Promise<HostResponse> {
    const s = request.sampling;
    const system = request.messages.filter((m) => m.role === 'system').map((m) => m.content);
    const lastUser = [...request.messages].reverse().find((m) => m.role === 'user');
    const body = {
      model: host.model,
      prompt: lastUser?.content ?? '',
      ...(system.length ? { system: system.join('\n\n') } : {}),
      messages: request.messages,
      ...(s.maxTokens === undefined ? {} : { max_tokens: s.maxTokens }),
      ...(s.temperature === undefined ? {} : { temperature: s.temperature }),
      ...(s.topP === undefined ? {} : { top_p: s.topP }),
      ...(s.seed === undefined ? {} : { seed: s.seed }),
      ...(s.stop === undefined || s.stop.length === 0 ? {} : { stop: s.stop }),
    };
    const call = callSignal(request.signal, this.timeoutMs);
    const started = performance.now();
    let res: Response;
    let text: string;
    try {
      res = await nodeFetch(this.url, { method: 'POST', headers: this.headers, body: JSON.stringify(body), signal: call.signal });
      text = await res.text();
    } catch (err) {
      const kind = request.signal?.aborted ? 'abort' : call.signal.aborted ? 'timeout' : 'connection';
      throw failureFromNetwork(host.id, err, kind, this.secrets);
    } finally {
      call.release();
    }
    if (!res.ok) throw failureFromHttp(host.id, res.status, res.headers, text, this.secrets);
    let parsed: z.infer<typeof GenerateResponseSchema>;
    try {
      parsed = GenerateResponseSchema.parse(JSON.parse(text));
    } catch {
      throw new ProviderFailure('server_error', `${host.id}: answer is not {text, usage:{input_tokens, output_tokens}}`, {
        retryable: true,
        status: res.status,
      });
    }
    const out: HostResponse = {
      text: parsed.text,
      usage: { inputTokens: parsed.usage.input_tokens, outputTokens: parsed.usage.output_tokens },
      latencyMs: performance.now() - started,
    };
    if (parsed.finish_reason) out.finishReason = parsed.finish_reason;
    return out;
  }
}
