/**
 * Code plugins in the real sandbox (QuickJS in WebAssembly, in the plugin's own thread): what a
 * plugin sees and may return, its version following its file's content, the time and memory caps
 * failing one record and not the next, nothing of the host inside, the built-ins, refusals at load
 * naming the field, and a stored run re-scored with a plugin through the real scorekeeper.
 */
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readScoringFile } from '../../core/cli/scoring-file.js';
import { answersTarget } from '../../core/models/providers/known-accuracy.js';
import { checkCodeDefinition, codeScorerBuilder } from '../../core/scoring/plugin/code-scorer.js';
import { ScorerRegistry } from '../../core/scoring/scorer-registry.js';
import type { Scorer, ScoreInput } from '../../core/scoring/scorer.js';
import { ScoringConfigSchema } from '../../core/scoring/scoring-config.js';
import { openEngine, type Engine } from '../../core/service/engine.js';
import { tempDir, writeTargetManifest } from '../helpers/temp.js';

/** A process started without --allow-network, and one started with it. */
const registry = new ScorerRegistry();
registry.register('code', codeScorerBuilder({ network: false }), checkCodeDefinition({ network: false }));
const networked = new ScorerRegistry();
networked.register('code', codeScorerBuilder({ network: true }), checkCodeDefinition({ network: true }));
const opened: Scorer[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close?.()));
});

function input(response: string, target?: string, extra: Partial<ScoreInput> = {}): ScoreInput {
  return {
    runId: 'r',
    model: 'm',
    epoch: 1,
    vignette: { id: 'v1', prompt: 'p', ...(target === undefined ? {} : { target }) },
    response,
    calls: { privacy: 'strict', skipPromptCache: false },
    ...extra,
  };
}

/** A plugin as the service takes one: built, then loaded once in a thread of its own. */
async function plugin(def: Record<string, unknown>, on = registry): Promise<Scorer> {
  const parsed = ScoringConfigSchema.parse({ scorers: [{ name: 'p', type: 'code', ...def }] });
  const scorer = on.build(parsed.scorers[0]!, 'scorers.0').scorer;
  await on.check(parsed);
  opened.push(scorer);
  return scorer;
}

async function first(scorer: Scorer, i: ScoreInput) {
  const [v] = await scorer.score(i);
  return v!;
}

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => {
  tmp.cleanup();
});

describe('a user plugin', () => {
  it('sees the record and may return a number, a boolean or {value, passed, explanation}', async () => {
    const p = await plugin({
      code: `function score(input) {
        if (input.response === 'num') return 0.25;
        if (input.response === 'bool') return input.target === 'T';
        return { value: 0.5, passed: false, explanation: [input.vignetteId, input.model, input.epoch, input.metadata.topic, input.prompt].join('|') };
      }`,
      severity: 'soft',
    });
    expect(p.kind).toBe('graded');
    expect(await first(p, input('num'))).toEqual({ value: 0.25, passed: null, severity: 'none', explanation: '', judge: null });
    expect(await first(p, input('bool', 'T'))).toEqual({ value: 1, passed: true, severity: 'none', explanation: '', judge: null });
    expect(await first(p, input('bool', 'X'))).toMatchObject({ value: 0, passed: false, severity: 'soft' });
    const obj = await first(p, input('obj', undefined, { model: 'mock-weak', epoch: 3, vignette: { id: 'q9', prompt: 'why?', metadata: { topic: 'odd' } } }));
    expect(obj).toEqual({ value: 0.5, passed: false, severity: 'soft', explanation: 'q9|mock-weak|3|odd|why?', judge: null });
  });

  it('fails the record, saying why, for a throw or anything that is not a score', async () => {
    const p = await plugin({
      code: `function score(i) {
        switch (i.response) {
          case 'nan': return NaN;
          case 'big': return 1.5;
          case 'str': return 'yes';
          case 'null': return null;
          case 'async': return Promise.resolve(1);
          case 'passed': return { value: 1, passed: 'yes' };
          case 'novalue': return { passed: true };
          case 'throw': throw new RangeError('no verdict for ' + i.vignetteId);
          default: return 1;
        }
      }`,
    });
    const reason = (response: string) => p.score(input(response)).then(() => 'scored', (e: Error) => `${e.name}: ${e.message}`);
    expect(await reason('nan')).toBe('UnscorableRecord: returned NaN, not a number in [0, 1]');
    expect(await reason('big')).toBe('UnscorableRecord: returned 1.5, not a number in [0, 1]');
    expect(await reason('str')).toMatch(/^UnscorableRecord: returned a string: score must return a number in \[0, 1\]/);
    expect(await reason('null')).toMatch(/returned a null/);
    expect(await reason('async')).toBe('UnscorableRecord: returned a promise: score must be synchronous');
    expect(await reason('passed')).toBe('UnscorableRecord: passed is "yes", not a boolean');
    expect(await reason('novalue')).toMatch(/value is nothing/);
    expect(await reason('throw')).toBe('UnscorableRecord: RangeError: no verdict for v1');
    expect(await reason('fine')).toBe('scored');
  });

  it('runs from a file next to the scoring file; the file content is the version', async () => {
    const scoring = join(tmp.dir, 'scoring.json');
    const pluginPath = join(tmp.dir, 'plugins', 'len.js');
    writeFileSync(scoring, JSON.stringify({ scorers: [{ name: 'len', type: 'code', file: 'plugins/len.js' }] }));
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(tmp.dir, 'plugins'));
    writeFileSync(pluginPath, 'function score(i) { return Math.min(1, i.response.length / 10); }\n');
    const a = await readScoringFile(scoring);
    expect(a.scorers[0]).toMatchObject({ file: 'plugins/len.js', code: expect.stringContaining('i.response.length / 10') });
    const sa = registry.build(a.scorers[0]!, 'scorers.0').scorer;
    opened.push(sa);
    expect((await first(sa, input('abcde'))).value).toBe(0.5);
    const same = registry.build((await readScoringFile(scoring)).scorers[0]!, 'scorers.0').scorer;
    expect(same.version).toBe(sa.version);

    writeFileSync(pluginPath, 'function score(i) { return Math.min(1, i.response.length / 20); }\n');
    const sb = registry.build((await readScoringFile(scoring)).scorers[0]!, 'scorers.0').scorer;
    opened.push(sb);
    expect(sb.version).not.toBe(sa.version);
    expect((await first(sb, input('abcde'))).value).toBe(0.25);

    writeFileSync(scoring, JSON.stringify({ scorers: [{ name: 'len', type: 'code', file: 'plugins/missing.js' }] }));
    await expect(readScoringFile(scoring)).rejects.toThrow(`${scoring}: scorers.0.file: cannot read "plugins/missing.js" (ENOENT)`);
  });
});

describe('the sandbox', () => {
  it('interrupts an endless loop at the time cap; the next record is scored', async () => {
    const p = await plugin({ code: `function score(i) { if (i.response === 'loop') for (;;) {} return 1; }` });
    await expect(p.score(input('loop'))).rejects.toThrow('ran past its time cap (100 ms a call, 1000 ms to load) and was interrupted');
    expect((await first(p, input('ok'))).value).toBe(1);
  });

  it('contains a memory bomb; the next record is scored', async () => {
    const p = await plugin({
      code: `function score(i) {
        const a = [];
        if (i.response === 'arrays') for (;;) a.push(new Array(1e6));
        if (i.response === 'strings') { let s = 'x'; for (;;) { s = s + s; a.push(s.slice(1)); } }
        return 1;
      }`,
    });
    await expect(p.score(input('arrays'))).rejects.toThrow(/memory cap|time cap/);
    await expect(p.score(input('strings'))).rejects.toThrow(/ran out of its 64 MiB memory cap|time cap/);
    expect((await first(p, input('ok'))).value).toBe(1);
  });

  it('stops the thread of a call QuickJS cannot interrupt; the records beside it are scored', async () => {
    // One call into a native built-in: indexOf walks 2^40 indices of an array-like, out of the interrupt's reach.
    const p = await plugin({ code: `function score(i) { if (i.response === 'stuck') Array.prototype.indexOf.call({ length: 2 ** 40 }, 1); return 1; }` });
    const outcomes = await Promise.all(['a', 'stuck', 'b'].map((r) => p.score(input(r)).then((v) => v[0]!.value, (e: Error) => e.message)));
    expect(outcomes).toEqual([1, 'ran past twice its time cap (100 ms a call, 1000 ms to load) in a call QuickJS cannot interrupt, and its thread was stopped', 1]);
  });

  it('holds nothing of the host: no require, process, fetch, timers or modules', async () => {
    const p = await plugin({
      code: `let settled = 'never';
      function score(i) {
        if (i.response === 'import') { import('node:fs').then(() => { settled = 'loaded'; }, () => { settled = 'refused'; }); return 1; }
        const seen = [typeof require, typeof process, typeof fetch, typeof setTimeout, typeof XMLHttpRequest, typeof std, typeof os, settled];
        return { value: 1, explanation: seen.join(',') };
      }`,
    });
    expect((await first(p, input('import'))).value).toBe(1);
    // No job of the plugin's ever runs outside its call, so nothing dynamic import could load reaches it.
    expect((await first(p, input('look'))).explanation).toBe('undefined,undefined,undefined,undefined,undefined,undefined,undefined,never');
    await expect(plugin({ code: `import fs from 'node:fs';\nfunction score() { return 1; }` })).rejects.toThrow(
      `scorers.0.code: the plugin "p" does not load: ReferenceError: could not load module 'node:fs'`,
    );
  });
});

describe('built-in plugins', () => {
  it('json_parses: the whole answer or a fenced json block', async () => {
    const p = await plugin({ builtin: 'json_parses' });
    expect(p.kind).toBe('pass_fail');
    expect((await first(p, input('{"a": 1}'))).passed).toBe(true);
    expect((await first(p, input('```json\n[1, 2]\n```'))).passed).toBe(true);
    expect((await first(p, input('Here it is:\n```json\n{"ok": true}\n```\nDone.'))).passed).toBe(true);
    const bad = await first(p, input('{"a": 1'));
    expect(bad).toMatchObject({ value: 0, passed: false, severity: 'hard' });
    expect(bad.explanation).toMatch(/^not JSON: /);
    expect((await first(p, input('plain words'))).passed).toBe(false);
  });

  it('citation_integrity: markers and listed sources agree; the explanation lists the dangling ones', async () => {
    const p = await plugin({ builtin: 'citation_integrity' });
    const good = 'Aspirin helps [1] and so does rest [2].\n\nReferences:\n[1] Smith 2020\n[2] Jones 2021';
    expect(await first(p, input(good))).toMatchObject({ value: 1, passed: true });
    const dangling = 'Aspirin helps [1] and so does rest [2, 3].\n\n## Sources\n1. Smith 2020\n2. Jones 2021\n4. Lee 2019';
    const d = await first(p, input(dangling));
    expect(d.value).toBeCloseTo(2 / 4);
    expect(d).toMatchObject({ passed: false, explanation: 'cited with no source listed: [3]; listed but never cited: [4]' });
    const footnotes = 'See [1-2].\n[1] A\n[2] B';
    expect((await first(p, input(footnotes))).value).toBe(1);
    expect(await first(p, input('No sources here.'))).toMatchObject({ value: 1, explanation: 'no citations and no sources' });
    expect(await first(p, input('It is known [1].'))).toMatchObject({ value: 0, explanation: 'cited with no source listed: [1]' });
  });

  it('url_health: refused without the network capability and the process allowing it; with both, HEADs each URL', async () => {
    await expect(plugin({ builtin: 'url_health' }, networked)).rejects.toThrow('scorers.0.capabilities: the url_health built-in needs the "network" capability');
    await expect(plugin({ builtin: 'url_health', capabilities: ['network'] })).rejects.toThrow(
      'scorers.0.capabilities: the scorer asks for the "network" capability, and this process was not started allowing it (--allow-network)',
    );
    await expect(plugin({ code: 'function score() { return 1; }', capabilities: ['network'] }, networked)).rejects.toThrow(
      'scorers.0.capabilities: only the url_health built-in can use the "network" capability',
    );

    const methods: string[] = [];
    const server = createServer((req, res) => {
      methods.push(req.method ?? '');
      res.writeHead(req.url === '/gone' ? 404 : req.url === '/moved' ? 301 : 200, req.url === '/moved' ? { location: '/ok' } : {});
      res.end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const p = await plugin({ builtin: 'url_health', capabilities: ['network'], severity: 'soft' }, networked);
      expect(p.kind).toBe('graded');
      const v = await first(p, input(`See ${base}/ok, ${base}/moved and (${base}/gone). Again: ${base}/ok.`));
      expect(v).toEqual({ value: 2 / 3, passed: false, severity: 'soft', explanation: `broken: ${base}/gone (HTTP 404)`, judge: null });
      expect(methods).toEqual(['HEAD', 'HEAD', 'HEAD']);
      expect(await first(p, input('no links'))).toMatchObject({ value: 1, passed: true, explanation: 'no URLs' });
    } finally {
      server.close();
    }
  });
});

describe('refusals at load', () => {
  it('names the field: bad source, two sources, a file nobody read, no score, a top-level loop', async () => {
    await expect(plugin({ code: 'function score(i) { return ' })).rejects.toThrow(/^scorers\.0\.code: the plugin "p" does not load: SyntaxError/);
    expect(() => ScoringConfigSchema.parse({ scorers: [{ name: 'p', type: 'code', code: 'x', builtin: 'json_parses' }] })).toThrow(/give one of code, file or builtin/);
    await expect(plugin({ file: 'x.js' })).rejects.toThrow('scorers.0.file: "x.js" was not read');
    await expect(plugin({ code: 'function grade(i) { return 1; }' })).rejects.toThrow(
      'scorers.0.code: the plugin "p" does not load: TypeError: the plugin defines no function score(input)',
    );
    await expect(plugin({ code: 'while (true) {}\nfunction score() { return 1; }' })).rejects.toThrow(/does not load: ran past its time cap/);
  });
});

describe('through the scorekeeper', () => {
  let engine: Engine | undefined;
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });

  it('re-scores a stored run with a plugin: the same verdicts as the match rule, and a failing record counted', async () => {
    const e = (engine = openEngine({ dataDir: join(tmp.dir, 'data'), tickMs: 20 }));
    const manifest = writeTargetManifest(tmp.dir, 30);
    const run = await e.service.createRun({ manifestPath: manifest, models: ['mock-strong'], epochs: 2 });
    await e.scheduler.runToCompletion(run.id);
    const code = `let tries = 0;
    function score(i) {
      if (i.vignetteId === 'q7' && i.epoch === 2) throw new Error('refused q7, try ' + (++tries));
      return i.response.trim().toLowerCase() === String(i.target).trim().toLowerCase();
    }`;
    await e.service.scoreRun({ runId: run.id, scorers: { scorers: [{ name: 'same', type: 'code', code }] } });
    await e.scoring.finish(run.id);
    const status = await e.service.scoringStatus({ runId: run.id });
    // Declared graded (a plugin may return numbers); every verdict a boolean, so read as pass/fail.
    expect(status.scorers.map((s) => [s.name, s.layer, s.kind, s.done, s.pending, s.failed])).toEqual([['same', 'plugin', 'pass_fail', 59, 0, 1]]);
    const rows = e.store.db
      .prepare(`SELECT sc.value, sc.explanation, sc.failed FROM scores sc`)
      .all() as { value: number; explanation: string; failed: number }[];
    // Tried once: the same plugin would throw again.
    expect(rows.filter((r) => r.failed).map((r) => r.explanation)).toEqual(['could not score: Error: refused q7, try 1']);
    let hits = 0;
    for (let ep = 1; ep <= 2; ep++) for (let i = 0; i < 30; i++) if (answersTarget('mock-strong', `q${i}`, ep, 0.8) && !(i === 7 && ep === 2)) hits += 1;
    expect(rows.filter((r) => !r.failed).reduce((n, r) => n + r.value, 0)).toBe(hits);

    // Bad source over the service: refused naming the scorer's field, nothing attached.
    await expect(e.service.scoreRun({ runId: run.id, scorers: { scorers: [{ name: 'bad', type: 'code', code: 'function score( {' }] } })).rejects.toMatchObject({
      code: 'invalid_input',
      where: 'scorers.0.code',
    });
    expect((await e.service.scoringStatus({ runId: run.id })).scorers).toHaveLength(1);
  });
  it('reports a plugin that returns booleans as pass/fail, exactly as the match rule with the same verdicts', async () => {
    const e = (engine = openEngine({ dataDir: join(tmp.dir, 'data'), tickMs: 20 }));
    const run = await e.service.createRun({
      manifestPath: writeTargetManifest(tmp.dir, 24),
      models: ['mock-strong', 'mock-weak'],
      epochs: 1,
      scorers: {
        scorers: [
          { name: 'exact', type: 'match' },
          { name: 'same', type: 'code', code: `function score(i) { return i.response.trim().toLowerCase() === String(i.target).trim().toLowerCase(); }` },
        ],
      },
    });
    await e.scheduler.runToCompletion(run.id);
    await e.scoring.finish(run.id);
    const rule = await e.service.report({ runId: run.id, scorer: 'exact' });
    const plugin = await e.service.report({ runId: run.id, scorer: 'same' });
    expect(plugin.kind).toBe('pass_fail');
    expect(plugin.declared_kind).toBe('graded');
    expect(plugin.pairs[0]!.test).toBe('mcnemar_exact');
    expect(plugin.models).toEqual(rule.models);
    expect(plugin.pairs).toEqual(rule.pairs);
  });
  it('a url_health scorer attached where the network is allowed is left pending, not waited for, where it is not', async () => {
    const dataDir = join(tmp.dir, 'data');
    let e = (engine = openEngine({ dataDir, tickMs: 20, allowPluginNetwork: true }));
    const links = { name: 'links', type: 'code' as const, builtin: 'url_health' as const, capabilities: ['network' as const] };
    const run = await e.service.createRun({ manifestPath: writeTargetManifest(tmp.dir, 5), models: ['mock-strong'], epochs: 1, scorers: { scorers: [links] } });
    await e.close();
    e = engine = openEngine({ dataDir, tickMs: 20 });
    e.scoring.start();
    await e.scheduler.runToCompletion(run.id);
    await e.scoring.finish(run.id);
    expect((await e.service.scoringStatus({ runId: run.id })).scorers.map((s) => [s.name, s.done, s.pending])).toEqual([['links', 0, 5]]);
  });
});
