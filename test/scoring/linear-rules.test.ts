/**
 * Rules that cannot hold the event loop: the `regex` rule and a JSON schema's `pattern` run on a
 * linear-time engine, so the patterns that make a backtracking engine run for minutes answer at
 * once; what the engine cannot run (backreferences, lookaround) and schemas too deep or too large
 * are refused when attached, naming the field. Through the HTTP server, `/health` answers within a
 * second while a run is scored by those rules and by hostile plugins.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ScorerRegistry } from '../../core/scoring/scorer-registry.js';
import type { ScoreInput } from '../../core/scoring/scorer.js';
import { ScoringConfigSchema } from '../../core/scoring/scoring-config.js';
import { initTelemetry } from '../../core/telemetry.js';
import { startApi, waitForRun, type ApiHarness } from '../http/harness.js';

initTelemetry({ defaultLevel: 'silent' });

// On a backtracking engine each of these runs for minutes on the answer below.
const EVIL = '^(a+)+$';
const ANSWER = `${'a'.repeat(40)}!`;

function input(response: string): ScoreInput {
  return { runId: 'r', model: 'm', epoch: 1, vignette: { id: 'v1', prompt: 'p' }, response, calls: { privacy: 'strict', skipPromptCache: false } };
}

const rules = new ScorerRegistry();
/** The scorer a definition builds; a refusal as "field: message", the way the service reports it. */
const build = (def: Record<string, unknown>) => {
  const parsed = ScoringConfigSchema.safeParse({ scorers: [{ name: 'r', ...def }] });
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  return rules.build(parsed.data.scorers[0]!, 'scorers.0').scorer;
};

describe('patterns on the linear-time engine', () => {
  it('a regex rule with nested quantifiers answers at once', async () => {
    const s = build({ type: 'regex', pattern: EVIL });
    expect((await s.score(input(ANSWER)))[0]).toMatchObject({ value: 0, passed: false, explanation: `does not match /${EVIL}/` });
    expect((await s.score(input('aaaa')))[0]).toMatchObject({ value: 1, passed: true });
    const flagged = build({ type: 'regex', pattern: '^answer: (yes|no)$', flags: 'im' });
    expect((await flagged.score(input('Reasoning\nANSWER: Yes')))[0]!.passed).toBe(true);
  });

  it('a JSON schema pattern with nested quantifiers answers at once', async () => {
    const s = build({ type: 'json', schema: { type: 'object', properties: { a: { type: 'string', pattern: EVIL } }, required: ['a'] } });
    expect((await s.score(input(JSON.stringify({ a: ANSWER }))))[0]).toMatchObject({ value: 0, explanation: 'JSON does not fit the schema: /a must match pattern "^(a+)+$"' });
    expect((await s.score(input(JSON.stringify({ a: 'aaa' }))))[0]!.passed).toBe(true);
  });

  it('refuses at attach what the engine cannot run, and schemas too deep or too large, naming the field', () => {
    expect(() => build({ type: 'regex', pattern: '(a)\\1' })).toThrow(/scorers\.0\.pattern: not a valid regular expression for the linear-time engine, which has no backreferences or lookaround/);
    expect(() => build({ type: 'regex', pattern: 'x(?=y)' })).toThrow(/scorers\.0\.pattern: not a valid regular expression/);
    expect(() => build({ type: 'json', schema: { properties: { a: { pattern: '(?<=a)b' } } } })).toThrow(/^scorers\.0\.schema: not a usable JSON Schema: not a valid regular expression/);
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 3000; i++) deep = { type: 'object', properties: { a: deep } };
    expect(() => build({ type: 'json', schema: deep })).toThrow('scorers.0.schema: the schema nests more than 32 levels deep');
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, { type: 'string' }])) };
    expect(() => build({ type: 'json', schema: wide })).toThrow(/^scorers\.0\.schema: the schema is \d+ characters of JSON, more than the 32000 allowed$/);
  });
});

describe('/health through the attacks', () => {
  let api: ApiHarness | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it('answers within a second while hostile rules and plugins score a run, and every verdict is stored', async () => {
    api = await startApi();
    const manifest = join(api.dir, 'evil.jsonl');
    writeFileSync(manifest, Array.from({ length: 40 }, (_, i) => JSON.stringify({ id: `q${i}`, prompt: 'say a', target: ANSWER })).join('\n') + '\n');
    const created = await api.call('POST', '/runs', { body: { manifest, models: ['mock-strong'], epochs: 1 } });
    expect(created.status).toBe(201);
    const runId = created.json.id as string;
    await waitForRun(api, runId);

    const hostile = (name: string) => readFileSync(join(import.meta.dirname, 'fixtures', 'hostile-plugins', `${name}.js`), 'utf8');
    const scorers = [
      { name: 'evil-regex', type: 'regex', pattern: EVIL },
      { name: 'evil-schema', type: 'json', schema: { type: 'string', pattern: EVIL } },
      { name: 'thrown', type: 'code', code: hostile('thrown-huge-string') },
      { name: 'stringify', type: 'code', code: hostile('stringify-replaced') },
      { name: 'slice', type: 'code', code: hostile('slice-replaced-huge-explanation') },
    ];
    const scoring = api.call('POST', `/runs/${runId}/score`, { body: { scorers: { scorers } } });
    const slow: string[] = [];
    let settled = false;
    void scoring.finally(() => (settled = true));
    let polls = 0;
    while (!settled || polls < 5) {
      polls += 1;
      const t0 = Date.now();
      const health = await fetch(`${api.url}/health`, { signal: AbortSignal.timeout(1000) }).then(
        (r) => r.status,
        (e: Error) => e.name,
      );
      if (health !== 200) slow.push(`poll ${polls}: ${health} after ${Date.now() - t0} ms`);
    }
    expect((await scoring).status).toBe(202);
    await api.engine.scoring.finish(runId);
    while (polls < 20) {
      polls += 1;
      const health = await fetch(`${api.url}/health`, { signal: AbortSignal.timeout(1000) }).then((r) => r.status, (e: Error) => e.name);
      if (health !== 200) slow.push(`poll ${polls}: ${health}`);
    }
    expect(slow).toEqual([]);
    const status = await api.engine.service.scoringStatus({ runId });
    expect(status.scorers.map((s) => [s.name, s.done + s.failed])).toEqual(scorers.map((s) => [s.name, 40]));
  });
});
