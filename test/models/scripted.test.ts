/**
 * The scripted mock provider: the first matching rule answers with its groups filled in, the
 * default answers the rest, tokens are counted like the other mocks, and a bad rule is refused
 * with its place.
 */
import { describe, expect, it } from 'vitest';
import { PanoptesError } from '../../core/domain.js';
import { catalog, request, router } from './helpers.js';

function scriptedCatalog(options: Record<string, unknown>) {
  return catalog({
    providers: { script: { kind: 'scripted', trainsOnData: false } },
    models: { s: { hosts: [{ provider: 'script', model: 's', contextWindow: 8000, options }] } },
  });
}

describe('scripted provider', () => {
  const options = {
    rules: [
      { match: 'list the (\\w+)', answer: '["alpha","beta","$1"]' },
      { match: '^review (\\w+)$', answer: 'reviewed $1 ($0)' },
    ],
    default: 'nothing to say',
  };

  it('answers from the first matching rule on the last user message, with $N groups', async () => {
    const r = router({ catalog: scriptedCatalog(options) });
    try {
      const a = await r.generate(request('s', 'please list the gammas now'));
      expect(a.text).toBe('["alpha","beta","gammas"]');
      expect(a.host).toBe('script/s');
      const b = await r.generate(
        request('s', 'review beta', {
          messages: [
            { role: 'system', content: 'list the nothing' },
            { role: 'user', content: 'list the earlier' },
            { role: 'assistant', content: 'x' },
            { role: 'user', content: 'review beta' },
          ],
        }),
      );
      expect(b.text).toBe('reviewed beta (review beta)');
    } finally {
      await r.close();
    }
  });

  it('falls back to the default and counts tokens like the other mocks', async () => {
    const r = router({ catalog: scriptedCatalog(options) });
    try {
      const a = await r.generate(request('s', 'twelve chars'));
      expect(a.text).toBe('nothing to say');
      expect(a.usage.inputTokens).toBe(3);
      expect(a.usage.outputTokens).toBe(Math.ceil('nothing to say'.length / 4));
    } finally {
      await r.close();
    }
  });

  it('refuses a rule that is not a regular expression, naming the host', async () => {
    const r = router({ catalog: scriptedCatalog({ rules: [{ match: '(unclosed', answer: 'x' }] }) });
    try {
      const err = await r.generate(request('s', 'anything')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PanoptesError);
      expect((err as PanoptesError).message).toMatch(/hosts\.script\/s\.options.*not a valid regular expression/);
    } finally {
      await r.close();
    }
  });
});
