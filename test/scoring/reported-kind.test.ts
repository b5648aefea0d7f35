/**
 * A code plugin declared graded that returns booleans is pass/fail in the report, the score matrix
 * and run comparisons alike, exactly as the `match` rule with the same verdicts: the store keeps,
 * as verdicts are written, whether every verdict of a (run, scorer) is a boolean, and a database
 * made before it knew is filled in once by its migration. Real engine, real SQLite in a temp folder.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEngine, type Engine } from '../../core/service/engine.js';
import { tempDir, writeTargetManifest } from '../helpers/temp.js';

/** The rule; a plugin giving its verdicts as booleans; one giving numbers (a number has no pass, so it is graded). */
const SCORERS = {
  scorers: [
    { name: 'exact', type: 'match' as const },
    { name: 'same', type: 'code' as const, code: `function score(i) { return i.response.trim().toLowerCase() === String(i.target).trim().toLowerCase(); }` },
    { name: 'halves', type: 'code' as const, code: `function score(i) { return i.vignetteId === 'q3' ? 0.5 : i.response.trim() === String(i.target) ? 1 : 0; }` },
  ],
};

let tmp: ReturnType<typeof tempDir>;
let engine: Engine | undefined;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(async () => {
  await engine?.close();
  engine = undefined;
  tmp.cleanup();
});

async function scoredRun(e: Engine, manifestPath: string, epochs: number) {
  const run = await e.service.createRun({ manifestPath, models: ['mock-strong', 'mock-weak'], epochs, scorers: SCORERS });
  await e.scheduler.runToCompletion(run.id);
  await e.scoring.finish(run.id);
  return run;
}

describe('a boolean code plugin declared graded', () => {
  it('shows pass marks and flip rates in the matrix, and pass/fail statistics in the report, as the rule does', async () => {
    const e = (engine = openEngine({ dataDir: join(tmp.dir, 'data'), tickMs: 20 }));
    const run = await scoredRun(e, writeTargetManifest(tmp.dir, 20), 3);

    const status = (await e.service.scoringStatus({ runId: run.id })).scorers;
    expect(status.map((s) => [s.name, s.kind])).toEqual([
      ['exact', 'pass_fail'],
      ['same', 'pass_fail'],
      ['halves', 'graded'],
    ]);

    const rule = await e.service.report({ runId: run.id, scorer: 'exact' });
    const plugin = await e.service.report({ runId: run.id, scorer: 'same' });
    expect(plugin.kind).toBe('pass_fail');
    expect(plugin.declared_kind).toBe('graded');
    expect(plugin.models).toEqual(rule.models);
    expect(plugin.models[0]!.flip_rate).not.toBeNull();
    expect(Object.keys(plugin.models[0]!.pass_at_k)).toEqual(['1', '2', '3']);

    const ruleMatrix = await e.service.scoreMatrix({ runId: run.id, scorer: 'exact', limit: 20 });
    const pluginMatrix = await e.service.scoreMatrix({ runId: run.id, scorer: 'same', limit: 20 });
    expect(pluginMatrix.kind).toBe('pass_fail');
    expect(pluginMatrix.rows).toEqual(ruleMatrix.rows);
    const cells = pluginMatrix.rows.flatMap((r) => r.cells);
    expect(cells.every((c) => c.passed !== null && c.flipRate !== null)).toBe(true);
    // The mocks answer each epoch afresh: some vignette flips, so the flip rates are not all 0.
    expect(cells.some((c) => c.flipRate! > 0)).toBe(true);
    // The matrix's flip rate per model, averaged, is the report's.
    for (const m of plugin.models) {
      const own = cells.filter((c) => c.model === m.model);
      expect(own.reduce((a, c) => a + c.flipRate!, 0) / own.length).toBeCloseTo(m.flip_rate!, 12);
    }

    // Verdicts that are not booleans keep the plugin graded everywhere, as declared.
    const halves = await e.service.report({ runId: run.id, scorer: 'halves' });
    expect(halves.kind).toBe('graded');
    expect(halves.declared_kind).toBeUndefined();
    const halvesMatrix = await e.service.scoreMatrix({ runId: run.id, scorer: 'halves' });
    expect(halvesMatrix.kind).toBe('graded');
    expect(halvesMatrix.rows.flatMap((r) => r.cells).every((c) => c.passed === null && c.flipRate === null)).toBe(true);
  });

  it('is compared by McNemar between two runs, as the rule is', async () => {
    const e = (engine = openEngine({ dataDir: join(tmp.dir, 'data'), tickMs: 20 }));
    const manifest = writeTargetManifest(tmp.dir, 24);
    const a = await scoredRun(e, manifest, 1);
    const b = await scoredRun(e, manifest, 1);
    const rule = await e.service.compareRuns({ runA: a.id, runB: b.id, scorer: 'exact' });
    const plugin = await e.service.compareRuns({ runA: a.id, runB: b.id, scorer: 'same' });
    expect(plugin.pairs.map((p) => p.test)).toEqual(['mcnemar_exact', 'mcnemar_exact']);
    expect({ ...plugin, scorer: 'exact', scorer_version_a: '', scorer_version_b: '' }).toEqual({ ...rule, scorer_version_a: '', scorer_version_b: '' });
    const graded = await e.service.compareRuns({ runA: a.id, runB: b.id, scorer: 'halves' });
    expect(graded.pairs.map((p) => p.test)).toEqual(['paired_t', 'paired_t']);
  });

  it('is kept by the store as pages commit: a retry verdict that is not a boolean ends it, for good', async () => {
    const e = (engine = openEngine({ dataDir: join(tmp.dir, 'data'), tickMs: 20 }));
    const run = await e.service.createRun({ manifestPath: writeTargetManifest(tmp.dir, 4), models: ['mock-strong'], epochs: 1 });
    await e.scheduler.runToCompletion(run.id);
    const [rs] = e.scores.attach(run.id, [{ version: 'v-test', name: 'p', kind: 'graded', layer: 'plugin', judges: [], definition: {} }]);
    expect(rs!.verdictsBoolean).toBeNull();
    expect(e.scores.claim(run.id, rs!.scorerId, 'me', 60_000)).toBe(true);
    const seqs = e.scores.recordsToScore(run.id, 0, e.scores.lastSeq(run.id), 10).map((r) => r.seq);
    const page = (seq: number, value: number, passed: boolean | null, extra: { failed?: boolean; noVerdict?: boolean } = {}) => ({
      scores: [{ seq, judge: 0, value, passed, severity: 'none' as const, explanation: '', failed: extra.failed ?? false, ...(extra.noVerdict ? { noVerdict: true } : {}) }],
      throughSeq: seq,
      done: 1,
      failed: extra.failed ? 1 : 0,
      leaseMs: 60_000,
    });
    const kept = () => e.scores.runScorer(run.id, rs!.scorerId)!.verdictsBoolean;
    // A record that could not be scored is no verdict: nothing known yet.
    expect(e.scores.commitScores(run.id, rs!.scorerId, 'me', page(seqs[0]!, 0, null, { failed: true }))).toBe(true);
    expect(kept()).toBeNull();
    e.scores.commitScores(run.id, rs!.scorerId, 'me', page(seqs[1]!, 1, true));
    expect(kept()).toBe(true);
    // A retry's verdict counts: 0.5 with a pass is not a boolean.
    e.scores.commitScores(run.id, rs!.scorerId, 'me', { ...page(seqs[2]!, 0, false), alongsideVerdicts: [{ value: 0.5, passed: true }] });
    expect(kept()).toBe(false);
    e.scores.commitScores(run.id, rs!.scorerId, 'me', page(seqs[3]!, 1, true));
    expect(kept()).toBe(false);
  });

  it('is read as pass/fail in a database scored before the store kept it, once migrated', async () => {
    const dataDir = join(tmp.dir, 'data');
    let e = (engine = openEngine({ dataDir, tickMs: 20 }));
    const run = await scoredRun(e, writeTargetManifest(tmp.dir, 10), 2);
    const before = (await e.service.scoringStatus({ runId: run.id })).scorers.map((s) => s.kind);
    const path = e.store.path;
    await e.close();
    engine = undefined;
    // As a build before schema version 15 left it: no column, none of the later versions' tables or triggers, user_version 14.
    const db = new Database(path);
    db.exec(`ALTER TABLE run_scorers DROP COLUMN verdicts_boolean`);
    const triggers = db.prepare<[], { name: string }>(`SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'changes_%'`).all();
    for (const { name } of triggers) db.exec(`DROP TRIGGER ${name}`);
    db.exec(`DROP TABLE finished_stages; DROP TABLE changes; DROP TABLE sweep_usage`);
    db.exec(`DROP INDEX responses_by_latency; DROP INDEX responses_by_output_tokens; DROP INDEX scores_by_value`);
    db.pragma('user_version = 14');
    db.close();
    e = engine = openEngine({ dataDir, tickMs: 20 });
    expect((await e.service.scoringStatus({ runId: run.id })).scorers.map((s) => s.kind)).toEqual(before);
    expect(before).toEqual(['pass_fail', 'pass_fail', 'graded']);
    expect(e.scores.runScorers(run.id).map((s) => s.verdictsBoolean)).toEqual([true, true, false]);
  });
});
