/**
 * The panel's free-tier providers in the embedded catalog, as the roster sees them: OpenRouter's
 * `:free` routes are never privacy-safe, Cloudflare Workers AI is, NVIDIA NIM and GitHub Models are
 * unsafe until their terms are verified; keys come from the environment variables the catalog names
 * (Cloudflare's account id too, in its address), and `frontierOk` counts only what is safe and keyed.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Catalog } from '../../core/models/catalog.js';
import { withBaseUrlFromEnv } from '../../core/models/providers/base-url.js';
import { examplesDir } from '../../core/paths.js';
import { router } from './helpers.js';

const hosted = Catalog.load(join(examplesDir(), 'hosted-catalog.json'));
const FREE = ['nvidia', 'cloudflare', 'github-models', 'openrouter-free'];
const FREE_KEYS = { NVIDIA_API_KEY: 'nvapi-test-000000', CF_API_TOKEN: 'cf-test-000000', CF_ACCOUNT_ID: 'acc123', GITHUB_TOKEN: 'ghp_test000000', OPENROUTER_API_KEY: 'sk-or-test-000000' };

describe('the free-tier providers in the embedded catalog', () => {
  it('carry a posture, a rate limit, a key variable and a dated note', () => {
    const providers = hosted.data.providers;
    expect(providers['openrouter-free']).toMatchObject({ trainsOnData: true, apiKeyEnv: 'OPENROUTER_API_KEY', rpm: 20 });
    expect(providers.cloudflare).toMatchObject({ trainsOnData: false, apiKeyEnv: 'CF_API_TOKEN', rpm: 300 });
    expect(providers.nvidia).toMatchObject({ trainsOnData: true, apiKeyEnv: 'NVIDIA_API_KEY', rpm: 40 });
    expect(providers['github-models']).toMatchObject({ trainsOnData: true, apiKeyEnv: 'GITHUB_TOKEN', rpm: 10, maxOutputTokens: 4000 });
    for (const name of FREE) expect(providers[name]!.note, name).toMatch(/2026-12-01/);
    // Every :free route is on the unsafe provider.
    for (const id of hosted.modelIds()) {
      for (const h of hosted.hosts(id).filter((x) => x.model.endsWith(':free'))) expect(h.provider, h.id).toBe('openrouter-free');
    }
  });

  it('shows the postures in the roster: only Cloudflare safe, each host routable once its key is set', () => {
    const r = router({ catalog: hosted, env: FREE_KEYS });
    const roster = r.roster();
    const hostsOf = (model: string) => roster.models.find((m) => m.model === model)!.hosts;
    const llama = hostsOf('llama-3.3-70b');
    const byProvider = Object.fromEntries(llama.map((h) => [h.provider, h]));
    expect(byProvider.cloudflare).toMatchObject({ privacySafe: true, state: 'ready' });
    expect(byProvider.nvidia).toMatchObject({ privacySafe: false, state: 'ready' });
    expect(byProvider['github-models']).toMatchObject({ privacySafe: false, state: 'ready' });
    expect(byProvider['openrouter-free']).toMatchObject({ id: 'openrouter-free/meta-llama/llama-3.3-70b-instruct:free', privacySafe: false, state: 'ready' });
    // groq's key is not set: its host is not routable, so the model's safe routable host is Cloudflare's.
    expect(byProvider.groq!.state).toBe('no_key');
    expect(roster.models.find((m) => m.model === 'llama-3.3-70b')!.privacySafeRoutable).toBe(true);
    // Without the keys nothing of the free tier is routable.
    const bare = router({ catalog: hosted, env: {} }).roster();
    expect(bare.models.find((m) => m.model === 'llama-3.3-70b')!.routable).toBe(false);
  });

  it('frontier_ok reads the postures: two frontier models on free hosts count only where a host is safe', () => {
    // A user's catalog judging the two gpt-oss models frontier (a dated judgement of their own).
    const judged = Catalog.parse({
      ...hosted.data,
      models: {
        ...hosted.data.models,
        'gpt-oss-120b': { ...hosted.data.models['gpt-oss-120b']!, frontier: true, frontierAsOf: '2026-12' },
        'gpt-oss-20b': { ...hosted.data.models['gpt-oss-20b']!, frontier: true, frontierAsOf: '2026-12' },
      },
    }, 'judged');
    // Cloudflare's key alone (OpenRouter's would also reach the paid, safe routes of other frontier models).
    const withCloudflare = router({ catalog: judged, env: { CF_API_TOKEN: 'cf-test-000000', CF_ACCOUNT_ID: 'acc123' } }).posture();
    expect(withCloudflare.frontierReady).toEqual(['gpt-oss-120b', 'gpt-oss-20b']);
    expect(withCloudflare.frontierOk).toBe(true);
    // Keys for the unsafe free tiers only: the frontier models are routable, but not safely.
    const unsafe = router({ catalog: judged, env: { NVIDIA_API_KEY: FREE_KEYS.NVIDIA_API_KEY, GITHUB_TOKEN: FREE_KEYS.GITHUB_TOKEN } }).posture();
    expect(unsafe.models.find((m) => m.model === 'gpt-oss-120b')).toMatchObject({ routable: true, privacySafeRoutable: false });
    expect(unsafe.frontierOk).toBe(false);
  });

  it("fills Cloudflare's account id into its address from CF_ACCOUNT_ID, and refuses a call without it", () => {
    const cf = hosted.data.providers.cloudflare!;
    expect(withBaseUrlFromEnv('cloudflare', cf, { CF_ACCOUNT_ID: 'acc123' }).baseUrl).toBe('https://api.cloudflare.com/client/v4/accounts/acc123/ai/v1');
    expect(() => withBaseUrlFromEnv('cloudflare', cf, {})).toThrow('provider cloudflare: its baseUrl needs CF_ACCOUNT_ID: set CF_ACCOUNT_ID');
  });
});
