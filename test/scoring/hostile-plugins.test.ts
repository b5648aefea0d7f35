/**
 * The hostile plugin corpus (fixtures/hostile-plugins/) against the real sandbox: each attack costs
 * the plugin its record, never the host. What crosses out of the sandbox is bounded whatever the
 * plugin replaced, memory held outside QuickJS's allocator (typed arrays) counts against the cap,
 * a loop of native calls is stopped at twice the time cap, and a plugin whose thread is lost again
 * and again is stopped for good with the reason.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { checkCodeDefinition, codeScorerBuilder } from '../../core/scoring/plugin/code-scorer.js';
import { ScorerRegistry } from '../../core/scoring/scorer-registry.js';
import type { Scorer, ScoreInput } from '../../core/scoring/scorer.js';
import { ScoringConfigSchema } from '../../core/scoring/scoring-config.js';
import { openEngine, type Engine } from '../../core/service/engine.js';
import { tempDir, writeTargetManifest } from '../helpers/temp.js';

const registry = new ScorerRegistry();
registry.register('code', codeScorerBuilder({ network: false }), checkCodeDefinition({ network: false }));
const opened: Scorer[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close?.()));
});

const corpus = (name: string) => readFileSync(join(import.meta.dirname, 'fixtures', 'hostile-plugins', `${name}.js`), 'utf8');

async function hostile(name: string): Promise<Scorer> {
  const parsed = ScoringConfigSchema.parse({ scorers: [{ name, type: 'code', code: corpus(name) }] });
  await registry.check(parsed);
  const scorer = registry.build(parsed.scorers[0]!, 'scorers.0').scorer;
  opened.push(scorer);
  return scorer;
}

function input(response: string): ScoreInput {
  return { runId: 'r', model: 'm', epoch: 1, vignette: { id: 'v1', prompt: 'p' }, response, calls: { privacy: 'strict', skipPromptCache: false } };
}

/** The verdict, or the reason the record failed, with its class. */
const outcome = (p: Scorer, response = 'x') =>
  p.score(input(response)).then(
    ([v]) => v!,
    (e: Error) => ({ failed: `${e.name}: ${e.message}` }),
  );

describe('what crosses out of the sandbox is cut by Panoptes', () => {
  it('a 14 MB explanation with String.prototype.slice replaced is stored as its first 2,000 characters', async () => {
    const v = await outcome(await hostile('slice-replaced-huge-explanation'));
    expect(v).toMatchObject({ value: 1, explanation: 'E'.repeat(2000) });
  });

  it('JSON.stringify and JSON.parse replaced change nothing outside the plugin', async () => {
    expect(await outcome(await hostile('stringify-replaced'))).toMatchObject({ value: 0.5, explanation: 'object' });
  });

  it('a polluted Object.prototype, Array.isArray and Promise[Symbol.hasInstance] reach only what the plugin itself returns', async () => {
    const v = await outcome(await hostile('prototype-polluted'));
    // The explanation is the plugin's own (read through its getter), cut; the result around it is Panoptes's.
    expect(v).toMatchObject({ value: 1, passed: true, explanation: 'Y'.repeat(2000) });
  });

  it('thrown strings and messages of 1 MB are cut; a message getter that never returns is interrupted', async () => {
    const p = await hostile('thrown-huge-string');
    expect(await outcome(p, 'string')).toEqual({ failed: `UnscorableRecord: threw ${'T'.repeat(2000 - 'threw '.length)}` });
    expect(await outcome(p, 'error')).toEqual({ failed: `UnscorableRecord: Error: ${'M'.repeat(2000 - 'Error: '.length)}` });
    expect(await outcome(p, 'getter')).toEqual({ failed: 'UnscorableRecord: ran past its time cap (100 ms a call, 1000 ms to load) and was interrupted' });
  });

  it('a Proxy whose reads never return is interrupted', async () => {
    expect(await outcome(await hostile('proxy-result'))).toEqual({ failed: 'UnscorableRecord: ran past its time cap (100 ms a call, 1000 ms to load) and was interrupted' });
  });
});

describe('the memory cap covers the whole WebAssembly memory', () => {
  it('one 200 MB typed array is refused at once', async () => {
    expect(await outcome(await hostile('typed-arrays'), 'one')).toEqual({ failed: 'UnscorableRecord: ran out of its 64 MiB memory cap' });
  });

  // Allocating typed arrays in QuickJS is slow enough on a busy machine that a call may reach the
  // time cap before the memory cap (and three in a row stop the plugin): either way the call is
  // stopped, and what it held is freed with its instance.
  const capped = /^(UnscorableRecord: (ran out of its 64 MiB memory cap|ran past (twice )?its time cap)|ScorerStopped: )/;

  it('1,500 x 1 MB typed arrays in one call are stopped at a cap', async () => {
    expect(await outcome(await hostile('typed-arrays'), 'many')).toEqual({ failed: expect.stringMatching(capped) });
  });

  it('10 MB more kept from every record: at most five records in a row before a cap', async () => {
    const p = await hostile('growing-state');
    let inARow = 0;
    let longest = 0;
    const failures: string[] = [];
    for (let i = 0; i < 8; i++) {
      const v = await outcome(p);
      if ('failed' in v) failures.push(v.failed);
      inARow = 'failed' in v ? 0 : inARow + 1;
      longest = Math.max(longest, inARow);
    }
    expect(longest).toBeLessThanOrEqual(5);
    expect(failures.length).toBeGreaterThanOrEqual(1);
    for (const f of failures) expect(f).toMatch(capped);
  });
});

describe('the time cap holds for native calls', () => {
  it('a loop of native calls between interrupt checks is stopped by the watchdog; the next record is scored again', async () => {
    const p = await hostile('native-call-loop');
    const stopped = { failed: 'UnscorableRecord: ran past twice its time cap (100 ms a call, 1000 ms to load) in a call QuickJS cannot interrupt, and its thread was stopped' };
    expect(await outcome(p)).toEqual(stopped);
  });

  it('a plugin that costs its thread on every record is stopped for good after three, with the reason', async () => {
    const p = await hostile('native-hang-every-record');
    const seen = await Promise.all(['a', 'b', 'c', 'd'].map((r) => outcome(p, r)));
    const lost = 'ran past twice its time cap (100 ms a call, 1000 ms to load) in a call QuickJS cannot interrupt, and its thread was stopped';
    const stopped = `ScorerStopped: its thread was lost 3 times in a row (last: ${lost}), so the plugin was stopped`;
    expect(seen).toEqual([{ failed: `UnscorableRecord: ${lost}` }, { failed: `UnscorableRecord: ${lost}` }, { failed: stopped }, { failed: stopped }]);
    expect(await outcome(p, 'later')).toEqual({ failed: stopped });
  });
});

describe('a plugin stopped for good stays stopped', () => {
  let engine: Engine | undefined;
  const tmp = tempDir();
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
  });
  afterAll(() => tmp.cleanup());

  it('through the scorekeeper: the reason is stored with the scorer version, and a restart never resumes it', async () => {
    const dataDir = join(tmp.dir, 'data');
    let e = (engine = openEngine({ dataDir, tickMs: 20 }));
    const run = await e.service.createRun({ manifestPath: writeTargetManifest(tmp.dir, 20), models: ['mock-strong'], epochs: 1 });
    await e.scheduler.runToCompletion(run.id);
    await e.service.scoreRun({ runId: run.id, scorers: { scorers: [{ name: 'hang', type: 'code', code: corpus('native-hang-every-record') }] } });
    await e.scoring.finish(run.id);
    const [stopped] = (await e.service.scoringStatus({ runId: run.id })).scorers;
    expect(stopped).toMatchObject({ name: 'hang', done: 0, failed: 0, pending: 20, stopped: expect.stringMatching(/^its thread was lost 3 times in a row \(last: ran past twice its time cap/) });
    await e.close();

    // After a restart the stopped version is not behind: nothing starts its plugin again, and finishing returns.
    e = engine = openEngine({ dataDir, tickMs: 20 });
    expect(e.scoring.behindRuns()).toEqual([]);
    e.scoring.start();
    await e.scoring.finish(run.id);
    expect((await e.service.scoringStatus({ runId: run.id })).scorers[0]).toMatchObject({ done: 0, pending: 20, stopped: stopped!.stopped });
  });
});
