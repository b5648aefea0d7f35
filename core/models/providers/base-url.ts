/**
 * A provider's `baseUrl` may name environment variables as `${NAME}`, for hosts whose address holds
 * an account of the user's (Cloudflare Workers AI: `.../accounts/${CF_ACCOUNT_ID}/ai/v1`): the catalog
 * stays free of anything personal, like it stays free of keys, and the variable is read where the
 * key is, when the provider's client is made.
 * Runs on: Node (core).
 */
import { PanoptesError } from '../../domain.js';
import type { Provider } from '../catalog.js';

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The provider with its `baseUrl`'s `${NAME}`s filled from `env`, refusing one that is unset. */
export function withBaseUrlFromEnv(name: string, provider: Provider, env: Readonly<Record<string, string | undefined>>): Provider {
  if (provider.baseUrl === undefined || !provider.baseUrl.includes('${')) return provider;
  const baseUrl = provider.baseUrl.replace(VARIABLE, (_, variable: string) => {
    const value = env[variable]?.trim();
    if (!value) {
      throw new PanoptesError('auth', `provider ${name}: its baseUrl needs ${variable}: set ${variable}`, { where: `providers.${name}.baseUrl` });
    }
    return encodeURIComponent(value);
  });
  return { ...provider, baseUrl };
}
