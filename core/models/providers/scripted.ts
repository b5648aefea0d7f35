/**
 * The scripted mock provider: answers in-process from rules a catalog writes, so an offline test or
 * a demo can make a model say exactly what a staged template needs (a JSON list for a fan-out, a
 * verdict on the second round of a judge loop). Options (provider- or host-level `options`):
 *   rules      [{ match, answer }]: the first rule whose `match` (a regular expression) finds the
 *              last user message answers with `answer`, where `$1`, `$2` ... are the match's groups
 *              and `$0` the whole match
 *   default    the answer when no rule matches (default: "ok")
 *   latencyMs  time per call (default 0: one turn of the event loop)
 * Token counts are the other mocks' (about four characters a token).
 * Runs on: Node (core).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { PanoptesError } from '../../domain.js';
import type { ResolvedHost } from '../catalog.js';
import type { ModelRequest } from '../model-client.js';
import type { HostClient, HostResponse } from './host-client.js';
import { mockTokenCount } from './mock.js';
import { parseProviderOptions } from './options.js';

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

const ScriptedRuleSchema = z
  .object({
    match: z.string().min(1).refine(compiles, 'not a valid regular expression'),
    answer: z.string(),
  })
  .strict();

export const ScriptedOptionsSchema = z
  .object({
    rules: z.array(ScriptedRuleSchema).default([]),
    default: z.string().default('ok'),
    latencyMs: z.number().nonnegative().default(0),
  })
  .strict();
export type ScriptedOptions = z.infer<typeof ScriptedOptionsSchema>;

interface CompiledScript {
  rules: { match: RegExp; answer: string }[];
  fallback: string;
  latencyMs: number;
}

function compile(opts: ScriptedOptions): CompiledScript {
  return {
    rules: opts.rules.map((r) => ({ match: new RegExp(r.match), answer: r.answer })),
    fallback: opts.default,
    latencyMs: opts.latencyMs,
  };
}

/** `$0`..`$9` in `answer` replaced by the match's groups (an unmatched group is empty). */
function fill(answer: string, groups: RegExpExecArray): string {
  return answer.replace(/\$(\d)/g, (_, n: string) => groups[Number(n)] ?? '');
}

/** The script's answer to a message: the first matching rule's, else the default. */
export function scriptedAnswer(script: CompiledScript, message: string): string {
  for (const rule of script.rules) {
    const found = rule.match.exec(message);
    if (found) return fill(rule.answer, found);
  }
  return script.fallback;
}

function lastUserMessage(request: ModelRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const m = request.messages[i]!;
    if (m.role === 'user') return m.content;
  }
  return '';
}

export class ScriptedHostClient implements HostClient {
  private readonly scripts = new WeakMap<ResolvedHost, CompiledScript>();

  private scriptOf(host: ResolvedHost): CompiledScript {
    let script = this.scripts.get(host);
    if (!script) {
      const merged = { ...(host.providerConfig.options ?? {}), ...(host.options ?? {}) };
      script = compile(parseProviderOptions(ScriptedOptionsSchema, merged, `hosts.${host.id}.options`));
      this.scripts.set(host, script);
    }
    return script;
  }

  async call(host: ResolvedHost, request: ModelRequest): Promise<HostResponse> {
    const script = this.scriptOf(host);
    const started = performance.now();
    try {
      if (script.latencyMs > 0) await sleep(script.latencyMs, undefined, { signal: request.signal });
      else await new Promise<void>((resolve) => setImmediate(resolve));
    } catch {
      throw new PanoptesError('cancelled', `${host.id}: call cancelled`, { retryable: false });
    }
    if (request.signal?.aborted) throw new PanoptesError('cancelled', `${host.id}: call cancelled`, { retryable: false });
    const text = scriptedAnswer(script, lastUserMessage(request));
    const inputTokens = request.messages.reduce((n, m) => n + mockTokenCount(m.content), 0);
    return {
      text,
      usage: { inputTokens, outputTokens: mockTokenCount(text) },
      latencyMs: performance.now() - started,
      finishReason: 'stop',
    };
  }
}
