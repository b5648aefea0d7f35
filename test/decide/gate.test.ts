/**
 * The gate of a head run against a base run, through the service over real stored runs scored by
 * real scorers: a worse head fails (1), an equal head passes (0), runs that cannot be compared say
 * why (2), and the Markdown for the pull request holds the table and the pass → fail vignettes.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeStoredRun, type StoredRunSpec } from '../../bench/stored-run.js';
import { formatGate, formatGateMarkdown } from '../../core/scoring/format-gate.js';
import { decideGate, gateExitCode, gateVerdict, type GateLine } from '../../core/scoring/gate.js';
import { useTempEngines } from '../helpers/temp-engine.js';
import { writeTargetManifest } from '../helpers/temp.js';

const SCORERS = { scorers: [{ name: 'exact', type: 'match' as const }, { name: 'terse', type: 'words' as const, max: 1000, severity: 'soft' as const }] };

describe('panoptes gate (the service)', () => {
  const tmp = useTempEngines();

  async function engineWith(runs: Array<Pick<StoredRunSpec, 'runId' | 'models' | 'metadataOf'> & { vignettes?: number }>) {
    const dataDir = join(tmp.dir, 'data');
    for (const r of runs) writeStoredRun(dataDir, { ...r, vignettes: r.vignettes ?? 120, epochs: 1 });
    const e = tmp.open({ dataDir, tickMs: 20 });
    for (const r of runs) {
      await e.service.scoreRun({ runId: r.runId, scorers: SCORERS });
      await e.scoring.finish(r.runId);
    }
    return e;
  }

  it('fails a head that answers worse (exit 1) and lists the vignettes that went from pass to fail', async () => {
    const e = await engineWith([
      { runId: 'rbase', models: [{ model: 'm1', accuracy: 0.8 }, { model: 'm2', accuracy: 0.7 }] },
      { runId: 'rhead', models: [{ model: 'm1', accuracy: 0.5 }, { model: 'm2', accuracy: 0.7 }] },
    ]);
    const result = await e.service.gate({ base: 'rbase', head: 'rhead' });
    expect(result.decision).toBe('worse');
    expect(gateExitCode(result)).toBe(1);
    const line = (scorer: string, model: string) => result.lines.find((l) => l.scorer === scorer && l.model === model)!;
    expect(line('exact', 'm1')).toMatchObject({ verdict: 'worse', n: 120 });
    expect(line('exact', 'm1').ci95![1]).toBeLessThan(0);
    // The same model at the same accuracy answers the same: nothing changed for m2.
    expect(line('exact', 'm2')).toMatchObject({ verdict: 'unchanged', diff: 0, pass_to_fail_count: 0 });
    expect(line('terse', 'm1').verdict).toBe('unchanged');
    // The known-accuracy draws are shared: at 0.5 the model fails exactly the vignettes whose draw lies in [0.5, 0.8).
    const exact = line('exact', 'm1');
    expect(exact.pass_to_fail_count).toBeGreaterThan(20);
    expect(exact.diff).toBeCloseTo(-exact.pass_to_fail_count / 120, 12);

    const md = formatGateMarkdown(result);
    expect(md).toMatch(/^## ❌ Panoptes gate: head is worse: 1 of 4 scorer × model lines are significantly worse\n/);
    expect(md).toContain('### m1\n\n| scorer | base | head | difference [95 % CI] | verdict |\n|---|---:|---:|---|---|\n');
    const [lo, hi] = exact.ci95!;
    expect(md).toContain(`| exact | ${exact.base_mean!.toFixed(3)} | ${exact.head_mean!.toFixed(3)} | ${exact.diff.toFixed(3)} [${lo.toFixed(3)}, ${hi.toFixed(3)}] | **worse** |`);
    expect(md).toContain(`Went from pass to fail:\n\n- exact (${exact.pass_to_fail_count}): ${exact.pass_to_fail.slice(0, 3).join(', ')}`);
    expect(md).toContain('### m2');
    expect(md).not.toMatch(/### m2[\s\S]*Went from pass to fail/);
    expect(formatGate(result).join('\n')).toMatch(/^m1\s+exact\s+120\s/m);
  });

  it('compares runs of prompt variants per variant: a head worse under one prompt only fails on that one', async () => {
    // 60 items, each posed as prompt "short" (even vignettes) and "long" (odd ones).
    const metadataOf = (i: number) => ({ variant: i % 2 === 0 ? 'short' : 'long', item: `q${i >> 1}` });
    const e = await engineWith([
      { runId: 'rbase', models: [{ model: 'm1', accuracy: 0.8 }], metadataOf },
      { runId: 'rhead', models: [{ model: 'm1', accuracy: (i) => (i % 2 === 0 ? 0.8 : 0.4) }], metadataOf },
    ]);
    const result = await e.service.gate({ base: 'rbase', head: 'rhead', scorers: ['exact'] });
    expect(result.decision).toBe('worse');
    expect(gateExitCode(result)).toBe(1);
    expect(result.lines.map((l) => [l.model, l.variant, l.n, l.verdict])).toEqual([
      ['m1', 'short', 60, 'unchanged'],
      ['m1', 'long', 60, 'worse'],
    ]);
    const [short, long] = result.lines as [GateLine, GateLine];
    expect(short).toMatchObject({ diff: 0, pass_to_fail_count: 0 });
    // Only the long prompt's vignettes (odd indices) went from pass to fail, and all of its drop is theirs.
    expect(long.pass_to_fail_count).toBeGreaterThan(10);
    expect(long.pass_to_fail.every((id) => Number(id.slice(1)) % 2 === 1)).toBe(true);
    expect(long.diff).toBeCloseTo(-long.pass_to_fail_count / 60, 12);
    // The same figures as the report's comparison of the arms.
    const comparison = await e.service.compareRuns({ runA: 'rbase', runB: 'rhead', scorer: 'exact' });
    const pair = comparison.pairs.find((p) => p.a === 'rhead:m1 · long')!;
    expect([long.diff, long.ci95]).toEqual([pair.diff, pair.ci95]);

    const md = formatGateMarkdown(result);
    expect(md).toMatch(/^## ❌ Panoptes gate: head is worse: 1 of 2 scorer × model × variant lines are significantly worse\n/);
    expect(md).toContain('| scorer | prompt variant | base | head | difference [95 % CI] | verdict |');
    expect(md).toMatch(/\| exact \| long \| 0\.\d{3} \| 0\.\d{3} \| .* \| \*\*worse\*\* \|/);
    expect(md).toContain(`- exact, long (${long.pass_to_fail_count}): `);
    expect(formatGate(result).join('\n')).toMatch(/^m1 · long\s+exact\s+60\s/m);
  });

  it('cannot gate a run posed until decided (its vignettes were chosen by its answers): exit 2, saying so', async () => {
    const e = tmp.open({ tickMs: 20 });
    e.scoring.start();
    const manifestPath = writeTargetManifest(tmp.dir, 60);
    const full = await e.service.createRun({ manifestPath, models: ['mock-strong', 'mock-weak'], epochs: 1, scorers: { scorers: [SCORERS.scorers[0]!] } });
    const adaptive = await e.service.createRun({ manifestPath, models: ['mock-strong', 'mock-weak'], epochs: 1, scorers: { scorers: [SCORERS.scorers[0]!] }, untilDecided: { batch: 10 } });
    for (const r of [full, adaptive]) {
      await e.runToEnd(r.id);
      await e.scoring.finish(r.id);
    }
    const result = await e.service.gate({ base: full.id, head: adaptive.id });
    expect(result.decision).toBe('incomparable');
    expect(gateExitCode(result)).toBe(2);
    expect(result.reasons).toEqual([expect.stringMatching(new RegExp(`^head run ${adaptive.id} was posed until decided: .*not valid`))]);
  });

  it('passes an equal head (exit 0), and a worse one within the margin', async () => {
    const e = await engineWith([
      { runId: 'rbase', models: [{ model: 'm1', accuracy: 0.8 }] },
      { runId: 'rsame', models: [{ model: 'm1', accuracy: 0.8 }] },
      { runId: 'rdip', models: [{ model: 'm1', accuracy: 0.72 }] },
    ]);
    const same = await e.service.gate({ base: 'rbase', head: 'rsame' });
    expect(same.decision).toBe('pass');
    expect(gateExitCode(same)).toBe(0);
    expect(same.lines.map((l) => l.verdict)).toEqual(['unchanged', 'unchanged']);
    expect(formatGateMarkdown(same)).toMatch(/^## ✅ Panoptes gate: head is not significantly worse than base/);

    const dip = await e.service.gate({ base: 'rbase', head: 'rdip', scorers: ['exact'] });
    expect(dip.lines).toHaveLength(1);
    const ci = dip.lines[0]!.ci95!;
    expect(dip.decision).toBe('worse');
    // The margin moves the bar: the drop is tolerated once −margin lies below the interval's top.
    const tolerant = await e.service.gate({ base: 'rbase', head: 'rdip', scorers: ['exact'], margin: Math.ceil(-ci[1] * 100) / 100 + 0.01 });
    expect(tolerant.decision).toBe('pass');
    expect(tolerant.lines[0]!.verdict).toBe('unchanged');
  });

  it('cannot compare runs of different manifests, with no common vignettes or models, or unscored (exit 2)', async () => {
    const e = await engineWith([
      { runId: 'rbase', models: [{ model: 'm1', accuracy: 0.8 }] },
      { runId: 'rshort', vignettes: 100, models: [{ model: 'm1', accuracy: 0.8 }] },
      { runId: 'rother', models: [{ model: 'm9', accuracy: 0.8 }] },
    ]);
    const short = await e.service.gate({ base: 'rbase', head: 'rshort' });
    expect(short.decision).toBe('incomparable');
    expect(gateExitCode(short)).toBe(2);
    expect(short.reasons).toEqual(['different manifests: 20 vignettes only in base (v100, v101, v102, v103, v104, … (20 in all))']);
    expect(short.lines).toEqual([]);
    expect(formatGateMarkdown(short)).toBe(`## ⚠️ Panoptes gate: cannot compare rbase (base) with rshort (head)\n\n- ${short.reasons[0]}\n`);

    const other = await e.service.gate({ base: 'rbase', head: 'rother' });
    expect(other.reasons).toEqual(['no common models: base ran m1, head ran m9']);

    writeStoredRun(join(tmp.dir, 'data'), { runId: 'runscored', vignettes: 120, epochs: 1, models: [{ model: 'm1', accuracy: 0.8 }] });
    const unscored = await e.service.gate({ base: 'rbase', head: 'runscored' });
    expect(unscored.reasons).toEqual(['no common scorers: base has exact, terse, head has none (score both runs with the same scoring file)']);
    const missing = await e.service.gate({ base: 'rbase', head: 'rshort', scorers: ['nope'] });
    expect(missing.reasons[0]).toBe('scorer "nope" is not attached to base (score it first: panoptes score RUN --scorers FILE)');
    await expect(e.service.gate({ base: 'rbase', head: 'rnowhere' })).rejects.toThrow(/rnowhere/);
    // A run still going (its owner's lease is an hour long, so nothing here takes it over).
    writeStoredRun(join(tmp.dir, 'data'), { runId: 'rlive', vignettes: 120, epochs: 1, models: [{ model: 'm1', accuracy: 0.8 }] });
    e.store.db.prepare(`UPDATE runs SET status = 'running', finished_at = NULL WHERE id = 'rlive'`).run();
    const live = await e.service.gate({ base: 'rbase', head: 'rlive' });
    expect(live.reasons[0]).toBe('head run rlive is running: gate it once it has finished');
  });

  it('a verdict is the interval against the margin', () => {
    expect(gateVerdict(null, 0)).toBe('too_few');
    expect(gateVerdict(null, 0, { diff: 0 })).toBe('unchanged');
    expect(gateVerdict(null, 0.05, { diff: -0.1 })).toBe('worse');
    expect(gateVerdict([-0.3, -0.01], 0)).toBe('worse');
    expect(gateVerdict([-0.3, -0.01], 0.05)).toBe('unchanged');
    expect(gateVerdict([-0.3, 0], 0)).toBe('unchanged');
    expect(gateVerdict([0.01, 0.2], 0)).toBe('better');
  });
});

describe('decideGate without a pair to compare', () => {
  it('is incomparable, never pass, when the comparison holds no pair for a model (unscored in one run, say)', () => {
    const comparison = { scorer: 'exact', run_a: 'A', run_b: 'B', scorer_version_a: 'v', scorer_version_b: 'v', pairs: [], models_a: [], models_b: [] };
    const result = decideGate(
      { base: 'A', head: 'B', models: ['mock-strong'], modelsOnlyBase: [], modelsOnlyHead: [], vignettes: 40 },
      [{ comparison, kind: 'pass_fail' } as unknown as Parameters<typeof decideGate>[1][number]],
      0,
      [],
    );
    expect(result.decision).toBe('incomparable');
    expect(gateExitCode(result)).toBe(2);
    expect(result.reasons[0]).toMatch(/^exact: no comparison of mock-strong between the runs/);
  });

  it('is incomparable when an arm of a model has no pair (a variant only one run scored), naming the arm', () => {
    const row = (model: string, variant: string) => ({ model: `${model} · ${variant}`, arm: { model, variant }, mean: 0.5 });
    const comparison = {
      scorer: 'exact', run_a: 'A', run_b: 'B', scorer_version_a: 'v', scorer_version_b: 'v',
      pairs: [{ a: 'B:m1 · short', b: 'A:m1 · short', n: 40, diff: 0, stderr: 0.01, ci95: [-0.02, 0.02] }],
      models_a: [row('m1', 'short'), row('m1', 'long')],
      models_b: [row('m1', 'short')],
    };
    const result = decideGate(
      { base: 'A', head: 'B', models: ['m1'], modelsOnlyBase: [], modelsOnlyHead: [], vignettes: 80 },
      [{ comparison, kind: 'graded' } as unknown as Parameters<typeof decideGate>[1][number]],
      0,
      [],
    );
    expect(result.decision).toBe('incomparable');
    expect(result.reasons).toEqual(['exact: no comparison of m1 · long between the runs (unscored in one of them, or the variant is only in one)']);
  });
});
