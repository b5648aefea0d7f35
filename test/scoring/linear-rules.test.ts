/**
 * Rules that cannot hold the event loop: the `regex` rule and a JSON schema's `pattern` run on a
 * linear-time engine, so the patterns that make a backtracking engine run for minutes answer at
 * once; what the engine cannot run (backreferences, lookaround) and schemas too deep or too large
 * are refused when attached, naming the field. Through the HTTP server, `/health` answers within a
 * second from the attach until a run is scored by those rules and by every plugin of the hostile
 * corpus (memory, time, output and crash-loop attacks alike).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
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
/** Records of the run scored over HTTP. */
const RECORDS = 20;

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

  it('refuses a 3,000-deep schema and one of 1 MB over HTTP naming the field, attaching nothing', async () => {
    api = await startApi({ startScheduler: false });
    const manifest = join(api.dir, 'one.jsonl');
    writeFileSync(manifest, JSON.stringify({ id: 'q0', prompt: 'say a' }) + '\n');
    const created = await api.call('POST', '/runs', { body: { manifest, models: ['mock-strong'], epochs: 1 } });
    const runId = created.json.id as string;
    // As text: the schemas are sent as a client would, not built (3,000 levels are past what this stack stringifies).
    const deep = `${'{"type": "object", "properties": {"a": '.repeat(3000)}{"type": "string"}${'}}'.repeat(3000)}`;
    const wide = JSON.stringify({ type: 'object', properties: Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`property${i}`, { type: 'string' }])) });
    expect(wide.length).toBeGreaterThan(900_000);
    for (const [schema, message] of [[deep, /nests more than 32 levels deep/], [wide, /characters of JSON, more than the 32000 allowed/]] as const) {
      const body = `{"scorers": {"scorers": [{"name": "j", "type": "json", "schema": ${schema}}]}}`;
      const res = await api.call('POST', `/runs/${runId}/score`, { body, headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ ok: false, error: { code: 'invalid_input', message: expect.stringMatching(message), where: 'scorers.scorers.0.schema' } });
    }
    expect((await api.engine.service.scoringStatus({ runId })).scorers).toEqual([]);
  });

  it('answers within a second while hostile rules and plugins score a run, and every verdict is stored', async () => {
    api = await startApi();
    const manifest = join(api.dir, 'evil.jsonl');
    writeFileSync(manifest, Array.from({ length: RECORDS }, (_, i) => JSON.stringify({ id: `q${i}`, prompt: 'say a', target: ANSWER })).join('\n') + '\n');
    const created = await api.call('POST', '/runs', { body: { manifest, models: ['mock-strong'], epochs: 1 } });
    expect(created.status).toBe(201);
    const runId = created.json.id as string;
    await waitForRun(api, runId);

    const hostile = (name: string) => readFileSync(join(import.meta.dirname, 'fixtures', 'hostile-plugins', `${name}.js`), 'utf8');
    const plugins = readdirSync(join(import.meta.dirname, 'fixtures', 'hostile-plugins')).filter((f) => f.endsWith('.js')).map((f) => f.slice(0, -3)).sort();
    expect(plugins).toHaveLength(9);
    const scorers = [
      { name: 'evil-regex', type: 'regex', pattern: EVIL },
      { name: 'evil-schema', type: 'json', schema: { type: 'string', pattern: EVIL } },
      ...plugins.map((name) => ({ name, type: 'code', code: hostile(name) })),
    ];
    // Polled from the attach until every scorer is through the run (or stopped for good).
    let settled = false;
    const scored = api.call('POST', `/runs/${runId}/score`, { body: { scorers: { scorers } } }).then(async (res) => {
      if (res.status === 202) await api!.engine.scoring.finish(runId);
      return res.status;
    });
    void scored.finally(() => (settled = true));
    const slow: string[] = [];
    let polls = 0;
    while (!settled || polls < 20) {
      polls += 1;
      const t0 = Date.now();
      const health = await fetch(`${api.url}/health`, { signal: AbortSignal.timeout(1000) }).then(
        (r) => r.status,
        (e: Error) => e.name,
      );
      if (health !== 200) slow.push(`poll ${polls}: ${health} after ${Date.now() - t0} ms`);
    }
    expect(await scored).toBe(202);
    expect(slow).toEqual([]);
    const status = await api.engine.service.scoringStatus({ runId });
    // The rules have a verdict for every record. Each plugin has a verdict or a stored failure for
    // every record, or was stopped for good with its reason: the plugin that costs its thread on
    // every record after three, and any other whose calls a loaded machine let reach twice the time
    // cap three times in a row (the watchdog's wall clock is the machine's).
    const reached = new Map(status.scorers.map((s) => [s.name, s.stopped === null ? s.done + s.failed : 'stopped']));
    expect(reached.get('evil-regex')).toBe(RECORDS);
    expect(reached.get('evil-schema')).toBe(RECORDS);
    expect(reached.get('native-hang-every-record')).toBe('stopped');
    for (const name of plugins) expect([name, [RECORDS, 'stopped']]).toEqual([name, expect.arrayContaining([reached.get(name)])]);
  });
});
