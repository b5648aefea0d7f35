/**
 * The catalog: providers (where calls go, under which limits and privacy posture) and logical
 * models (ordered hosts with prices and context windows). The single source of truth for routing
 * and cost; adding a model or provider is an edit of a catalog file, not of code.
 * Runs on: Node (core).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { PanoptesError } from '../domain.js';
import { FALLBACK_PRICE, type Price } from '../common/cost.js';
import { formatZodIssues } from '../validation.js';

export const ProviderKindSchema = z.enum(['openai', 'anthropic', 'generate', 'mock', 'scripted', 'gguf']);
export type ProviderKind = z.infer<typeof ProviderKindSchema>;

export const DailyBudgetSchema = z
  .object({
    tokens: z.number().int().positive().optional(),
    usd: z.number().positive().optional(),
    calls: z.number().int().positive().optional(),
  })
  .strict();

export const ProviderSchema = z
  .object({
    kind: ProviderKindSchema,
    baseUrl: z.string().url().optional(),
    /** Name of the environment variable holding the key; the key itself never appears in a catalog. */
    apiKeyEnv: z.string().min(1).optional(),
    /** true: trains on or logs prompts (unsafe); false: safe; "per-model": decided per host. */
    trainsOnData: z.union([z.boolean(), z.literal('per-model')]),
    rpm: z.number().positive().optional(),
    maxConcurrency: z.number().int().positive().optional(),
    /** Longest wait for one call before it counts as a timeout (default 60 s). */
    timeoutMs: z.number().int().positive().optional(),
    /** Output tokens a call may produce when its run sets no max (default 4096, at most the host's window). */
    maxOutputTokens: z.number().int().positive().optional(),
    dailyBudget: DailyBudgetSchema.optional(),
    /** false: the provider's models take no reasoning settings (effort, thinking budget); a run asking for them is refused. */
    takesReasoning: z.boolean().optional(),
    /** Where the facts above come from (privacy terms, limits): for people, ignored by code. */
    note: z.string().optional(),
    /** Kind-specific settings (e.g. the mock's latency and fault injection). */
    options: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type Provider = z.infer<typeof ProviderSchema>;

export const HostSchema = z
  .object({
    provider: z.string().min(1),
    /** The provider's own id for the model. */
    model: z.string().min(1),
    contextWindow: z.number().int().positive(),
    inputPerMTok: z.number().nonnegative().optional(),
    outputPerMTok: z.number().nonnegative().optional(),
    /** Overrides the provider's posture for this host (required where the provider says "per-model"). */
    trainsOnData: z.boolean().optional(),
    /** Overrides the provider's `takesReasoning` for this host. */
    takesReasoning: z.boolean().optional(),
    options: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type Host = z.infer<typeof HostSchema>;

export const ModelSchema = z
  .object({
    label: z.string().optional(),
    /**
     * A judgement that the model is at the frontier (the roster and `frontier_ok` count these).
     * Judgements age, so one is always dated: `frontierAsOf` is required with it.
     */
    frontier: z.boolean().optional(),
    /** When the frontier judgement was made: `YYYY-MM` or `YYYY-MM-DD`. */
    frontierAsOf: z
      .string()
      .regex(/^\d{4}-\d{2}(-\d{2})?$/, 'a date: YYYY-MM or YYYY-MM-DD')
      .optional(),
    hosts: z.array(HostSchema).min(1),
  })
  .strict()
  .refine((m) => m.frontier !== true || m.frontierAsOf !== undefined, {
    message: 'a frontier model needs frontierAsOf (when the judgement was made)',
    path: ['frontierAsOf'],
  });
export type CatalogModel = z.infer<typeof ModelSchema>;

/**
 * A profile: a named set of keys and budgets. Each entry overrides, for one provider, the key
 * variable and the daily budget; budget windows are kept per (profile, provider).
 */
export const ProfileSchema = z
  .object({
    providers: z.record(
      z.string(),
      z.object({ apiKeyEnv: z.string().min(1).optional(), dailyBudget: DailyBudgetSchema.optional() }).strict(),
    ),
  })
  .strict();
export type Profile = z.infer<typeof ProfileSchema>;

/** Where a catalog's facts come from and when they were checked. */
export const CatalogMetaSchema = z
  .object({ description: z.string().optional(), asOf: z.string().optional(), sources: z.array(z.string()).optional() })
  .strict();

export const CatalogSchema = z
  .object({
    meta: CatalogMetaSchema.optional(),
    providers: z.record(z.string(), ProviderSchema),
    models: z.record(z.string(), ModelSchema),
    profiles: z.record(z.string(), ProfileSchema).optional(),
  })
  .strict()
  .superRefine((cat, ctx) => {
    for (const [modelId, model] of Object.entries(cat.models)) {
      model.hosts.forEach((host, i) => {
        const provider = cat.providers[host.provider];
        if (!provider) {
          ctx.addIssue({
            code: 'custom',
            path: ['models', modelId, 'hosts', i, 'provider'],
            message: `unknown provider "${host.provider}"`,
          });
        } else if (provider.trainsOnData === 'per-model' && host.trainsOnData === undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['models', modelId, 'hosts', i, 'trainsOnData'],
            message: `provider "${host.provider}" decides privacy per model: set trainsOnData on this host`,
          });
        }
      });
    }
    for (const [profileId, profile] of Object.entries(cat.profiles ?? {})) {
      for (const providerId of Object.keys(profile.providers)) {
        if (!cat.providers[providerId]) {
          ctx.addIssue({
            code: 'custom',
            path: ['profiles', profileId, 'providers', providerId],
            message: `unknown provider "${providerId}"`,
          });
        }
      }
    }
  });
export type CatalogData = z.infer<typeof CatalogSchema>;


/** A host as the router and the UI see it: the catalog entry with its provider resolved. */
export interface ResolvedHost extends Host {
  /** `provider/model`: the name recorded with every response. */
  id: string;
  providerConfig: Provider;
  /** Whether the host neither trains on nor logs prompts. */
  privacySafe: boolean;
}

/** What a provider runs with under one profile: the key variable and the daily budget. */
export interface ProviderTerms {
  apiKeyEnv: string | undefined;
  dailyBudget: DailyBudget | undefined;
}
export type DailyBudget = z.infer<typeof DailyBudgetSchema>;

export class Catalog {
  readonly data: CatalogData;
  readonly source: string;
  /** Resolved hosts per model, built once: the catalog never changes after parsing, and routing asks on every call. */
  private readonly resolved = new Map<string, ResolvedHost[]>();

  constructor(data: CatalogData, source: string) {
    this.data = data;
    this.source = source;
  }

  static parse(raw: unknown, source: string): Catalog {
    const parsed = CatalogSchema.safeParse(raw);
    if (!parsed.success) {
      throw new PanoptesError('invalid_input', `invalid catalog ${source}: ${formatZodIssues(parsed.error)}`, {
        where: source,
      });
    }
    return new Catalog(parsed.data, source);
  }

  static load(path: string): Catalog {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new PanoptesError('invalid_input', `cannot read catalog ${path}: ${(err as Error).message}`, {
        where: path,
      });
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new PanoptesError('invalid_input', `catalog ${path} is not JSON: ${(err as Error).message}`, {
        where: path,
      });
    }
    return Catalog.parse(raw, path);
  }

  /** Several catalogs as one: later files add models and providers, and override same-named ones. */
  static merge(catalogs: Catalog[]): Catalog {
    const data: CatalogData = { providers: {}, models: {}, profiles: {} };
    for (const c of catalogs) {
      Object.assign(data.providers, c.data.providers);
      Object.assign(data.models, c.data.models);
      Object.assign(data.profiles!, c.data.profiles ?? {});
    }
    return Catalog.parse(data, catalogs.map((c) => c.source).join(' + '));
  }

  modelIds(): string[] {
    return Object.keys(this.data.models).sort();
  }

  has(model: string): boolean {
    return Object.hasOwn(this.data.models, model);
  }

  /** The model's hosts in catalog order (the same array on every call: do not mutate it). */
  hosts(model: string): ResolvedHost[] {
    const cached = this.resolved.get(model);
    if (cached) return cached;
    const entry = this.data.models[model];
    if (!entry) return [];
    const hosts = entry.hosts.map((h) => {
      const providerConfig = this.data.providers[h.provider]!;
      const trains = h.trainsOnData ?? providerConfig.trainsOnData;
      return { ...h, id: `${h.provider}/${h.model}`, providerConfig, privacySafe: trains === false };
    });
    this.resolved.set(model, hosts);
    return hosts;
  }

  /** A provider's key variable and daily budget under a profile (the profile's entry wins). */
  termsOf(provider: string, profile: string): ProviderTerms {
    const base = this.data.providers[provider];
    const own = this.data.profiles?.[profile]?.providers[provider];
    return {
      apiKeyEnv: own?.apiKeyEnv ?? base?.apiKeyEnv,
      dailyBudget: own?.dailyBudget ?? base?.dailyBudget,
    };
  }

  /** The price of a logical model: its first host's, else the flat fallback. */
  priceOf(model: string): Price {
    const first = this.data.models[model]?.hosts[0];
    return {
      inputPerMTok: first?.inputPerMTok ?? FALLBACK_PRICE.inputPerMTok,
      outputPerMTok: first?.outputPerMTok ?? FALLBACK_PRICE.outputPerMTok,
    };
  }
}

/** Output tokens a call may produce when its run sets no `maxTokens` and its provider no `maxOutputTokens`. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/**
 * The output cap a call to `host` runs under: the run's `maxTokens`, else the provider's
 * `maxOutputTokens` (default 4096), never more than the host's context window. Every call has one,
 * so no answer, of any provider, can run on for ever.
 */
export function outputCapOf(host: ResolvedHost, maxTokens: number | undefined): number {
  return maxTokens ?? Math.min(host.providerConfig.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS, host.contextWindow);
}

/**
 * Tokens of its window a call needs from a host: the prompt and the most it may write. A local
 * GGUF host fits the output cap to the room the prompt leaves (the answer ends `length` at the
 * window), so it needs the prompt and one token of answer; a remote API would refuse the call.
 */
export function windowNeedOf(host: ResolvedHost, promptTokens: number, maxOutput: number): number {
  return promptTokens + (host.providerConfig.kind === 'gguf' ? 1 : maxOutput);
}

/** A host's own price, else the flat fallback. */
export function priceOfHost(host: Host): Price {
  return {
    inputPerMTok: host.inputPerMTok ?? FALLBACK_PRICE.inputPerMTok,
    outputPerMTok: host.outputPerMTok ?? FALLBACK_PRICE.outputPerMTok,
  };
}
