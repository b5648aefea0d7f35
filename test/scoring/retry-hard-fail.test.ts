/**
 * Retries on hard fails (`retryOnHardFail`) on a real engine (real SQLite in a temp dir, the mock
 * models with a known accuracy, which draw each attempt anew): a hard fail is posed again until it
 * passes or the retries are spent, every attempt is stored with its score and its calls apart from
 * the sweep's, the report uses the first attempt unless asked for the final one, retries never
 * come from the prompt cache, a failed retry call ends the retries and says so, soft fails are
 * not retried, and bad values are refused naming the field.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { targetOf, writeStoredRun } from '../../bench/stored-run.js';
import { answersTarget, knownAccuracyAnswer } from '../../core/models/providers/known-accuracy.js';
import type { Engine } from '../../core/service/engine.js';
import { ScoringConfigSchema } from '../../core/scoring/scoring-config.js';
import { scorerVersion } from '../../core/scoring/scorer-version.js';
import { writeMockCatalog, writeTargetManifest } from '../helpers/temp.js';
import { useTempEngines } from '../helpers/temp-engine.js';

const tmp = useTempEngines();

const ACCURACY: Record<string, number> = { 'mock-strong': 0.8, 'mock-weak': 0.6 };
const VIGNETTES = 60;
const EPOCHS = 2;

/** The attempt numbers the known-accuracy mock needs for (model, vignette, epoch): 1, then retries until a hit or `retries` spent. */
function expectedAttempts(model: string, id: string, epoch: number, retries: number): number[] {
  const attempts = [1];
  for (let a = 1; a <= retries && !answersTarget(model, id, epoch, ACCURACY[model]!, a); a++) attempts.push(a + 1);
  return attempts;
}

interface AttemptRow {
  model: string;
  vignette_id: string;
  epoch: number;
  attempt: number;
  response: string;
  value: number;
}

function attemptRows(e: Engine, scorer: string): AttemptRow[] {
  return e.store.db
    .prepare(
      `SELECT j.model, v.vignette_id, j.epoch, a.attempt, a.response, sc.value
       FROM retry_attempts a JOIN scorers s ON s.id = a.scorer_id AND s.name = ?
         JOIN responses r ON r.seq = a.seq JOIN jobs j ON j.id = r.job_id JOIN vignettes v ON v.run_id = j.run_id AND v.idx = r.vignette_idx
         JOIN attempt_scores sc ON sc.scorer_id = a.scorer_id AND sc.seq = a.seq AND sc.attempt = a.attempt
       ORDER BY j.model, j.epoch, r.vignette_idx, a.attempt`,
    )
    .all(scorer) as AttemptRow[];
}

describe('retries on hard fails', () => {
  it('poses a hard fail again until it passes, keeps every attempt, and reports the first attempt unless asked', async () => {
    const e = (tmp.open({ tickMs: 20 }));
    e.scoring.start();
    const run = await e.service.createRun({
      manifestPath: writeTargetManifest(tmp.dir, VIGNETTES),
      models: ['mock-strong', 'mock-weak'],
      epochs: EPOCHS,
      scorers: {
        scorers: [
          { name: 'exact', type: 'match' },
          { name: 'exact-retried', type: 'match', retryOnHardFail: 2 },
          { name: 'exact-soft', type: 'match', severity: 'soft', retryOnHardFail: 2 },
        ],
      },
    });
    expect(await e.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'done' });
    await e.scoring.finish(run.id);

    // Every attempt the ground truth asks for, stored once, with the model's own new answer: none
    // from the prompt cache, which holds each record's first (failed) answer under the same key.
    const expected: Omit<AttemptRow, 'response' | 'value'>[] = [];
    let finalHits = 0;
    let firstHits = 0;
    for (const model of ['mock-strong', 'mock-weak']) {
      for (let epoch = 1; epoch <= EPOCHS; epoch++) {
        for (let i = 0; i < VIGNETTES; i++) {
          const attempts = expectedAttempts(model, `q${i}`, epoch, 2);
          for (const attempt of attempts.slice(1)) expected.push({ model, vignette_id: `q${i}`, epoch, attempt });
          if (attempts.length === 1) firstHits += 1;
          if (answersTarget(model, `q${i}`, epoch, ACCURACY[model]!, attempts[attempts.length - 1]!)) finalHits += 1;
        }
      }
    }
    const rows = attemptRows(e, 'exact-retried');
    expect(rows.map(({ response: _r, value: _v, ...k }) => k)).toEqual(expected);
    expect(expected.length).toBeGreaterThan(20);
    for (const r of rows) {
      const i = Number(r.vignette_id.slice(1));
      expect(r.response).toBe(knownAccuracyAnswer(r.model, r.vignette_id, r.epoch, 'ABCDE'[i % 5]!, ACCURACY[r.model]!, r.attempt));
      expect(r.value).toBe(r.response === 'ABCDE'[i % 5] ? 1 : 0);
    }
    // Some retry passed where the first answer failed: a cached answer could never have.
    expect(rows.some((r) => r.value === 1)).toBe(true);
    // Side by side, each answer carries its retries with their verdicts; an answer without has none.
    const shown = rows[0]!;
    const detail = await e.service.scoreDetail({ runId: run.id, vignetteId: shown.vignette_id });
    const answer = detail.responses.find((r) => r.model === shown.model && r.epoch === shown.epoch)!;
    const own = rows.filter((r) => r.model === shown.model && r.epoch === shown.epoch && r.vignette_id === shown.vignette_id);
    expect(answer.retries.map((a) => [a.scorer, a.attempt, a.response, a.scores.map((x) => x.value)])).toEqual(
      own.map((r) => ['exact-retried', r.attempt, r.response, [r.value]]),
    );
    expect(answer.scores.map((x) => x.scorer)).toEqual(['exact', 'exact-retried', 'exact-soft']);
    expect(detail.responses.filter((r) => r.retries.length === 0).length).toBeGreaterThan(0);
    // A soft fail is only a flag: nothing is retried.
    expect(attemptRows(e, 'exact-soft')).toEqual([]);

    // The default report is the sweep's: equal to the scorer without retries, figure for figure.
    const plain = await e.service.report({ runId: run.id, scorer: 'exact' });
    const first = await e.service.report({ runId: run.id, scorer: 'exact-retried' });
    const final = await e.service.report({ runId: run.id, scorer: 'exact-retried', attempt: 'final' });
    expect(first.attempt).toBe('first');
    expect(final.attempt).toBe('final');
    expect(first.models).toEqual(plain.models);
    expect(first.pairs).toEqual(plain.pairs);
    const n = (r: typeof first) => r.models.reduce((s, m) => s + m.mean * m.n * EPOCHS, 0);
    expect(Math.round(n(first))).toBe(firstHits);
    expect(Math.round(n(final))).toBe(finalHits);
    for (const m of final.models) expect(m.mean).toBeGreaterThan(first.models.find((f) => f.model === m.model)!.mean);

    // The retries' calls are the candidates', accounted apart from the sweep's.
    const stats = await e.service.stats({ runId: run.id });
    expect(stats.models.map((m) => [m.model, m.calls])).toEqual([
      ['mock-strong', VIGNETTES * EPOCHS],
      ['mock-weak', VIGNETTES * EPOCHS],
    ]);
    const perModel = (model: string) => expected.filter((x) => x.model === model).length;
    expect(stats.retries.map((m) => [m.model, m.calls, m.cachedCalls])).toEqual([
      ['mock-strong', perModel('mock-strong'), 0],
      ['mock-weak', perModel('mock-weak'), 0],
    ]);
    expect(stats.retries.every((m) => m.inputTokens > 0 && m.estCostUsd > 0)).toBe(true);
    const status = await e.service.scoringStatus({ runId: run.id });
    expect(status.retryUsage.map((m) => m.calls)).toEqual(stats.retries.map((m) => m.calls));

    // The export has a line per attempt, numbered from the sweep's record (1).
    const out = join(tmp.dir, 'scores.jsonl');
    await e.service.exportRun({ runId: run.id, outPath: out, format: 'scores' });
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { scorer: string; attempt: number });
    const retried = lines.filter((l) => l.scorer === 'exact-retried');
    expect(retried.filter((l) => l.attempt === 1)).toHaveLength(2 * VIGNETTES * EPOCHS);
    expect(retried.filter((l) => l.attempt > 1)).toHaveLength(expected.length);
    expect(lines.filter((l) => l.scorer !== 'exact-retried').every((l) => l.attempt === 1)).toBe(true);
  }, 60_000);

  it('a retry whose call fails leaves the last attempt standing and says so, without looping', async () => {
    const dataDir = join(tmp.dir, 'data');
    writeStoredRun(dataDir, { runId: 'rbroken', vignettes: 20, epochs: 1, models: [{ model: 'broken', accuracy: 0.5 }] });
    const catalog = writeMockCatalog(tmp.dir, { broken: { errorRate: 1, errorKind: 'bad_request' } });
    const e = (tmp.open({ dataDir, catalogPaths: [catalog], tickMs: 20 }));
    await e.service.scoreRun({ runId: 'rbroken', scorers: { scorers: [{ name: 'exact', type: 'match', retryOnHardFail: 3 }] } });
    await e.scoring.finish('rbroken');
    const scores = e.store.db.prepare(`SELECT value, explanation FROM scores ORDER BY seq`).all() as { value: number; explanation: string | null }[];
    const failed = scores.filter((s) => s.value === 0);
    expect(failed.length).toBeGreaterThan(0);
    for (const s of failed) expect(s.explanation).toMatch(/\[retry 2 got no answer \(.*400 Bad Request.*\): this attempt stands\]$/);
    for (const s of scores.filter((x) => x.value === 1)) expect(s.explanation).toBeNull();
    expect(e.store.db.prepare(`SELECT COUNT(*) AS n FROM retry_attempts`).get()).toEqual({ n: 0 });
    expect((await e.service.stats({ runId: 'rbroken' })).retries).toEqual([]);
    const first = await e.service.report({ runId: 'rbroken' });
    const final = await e.service.report({ runId: 'rbroken', attempt: 'final' });
    expect(final.models).toEqual(first.models);
    expect(targetOf(0)).toBe('A');
  });

  it('a judge scorer retries too: its verdicts on the attempts are stored and their judge calls counted with the judges', async () => {
    const dataDir = join(tmp.dir, 'data');
    writeStoredRun(dataDir, { runId: 'rjudged', vignettes: 40, epochs: 1, models: [{ model: 'mock-weak', accuracy: 0.6 }] });
    const e = (tmp.open({ dataDir, tickMs: 20 }));
    const judged = { name: 'judged', type: 'judge' as const, judges: ['mock-judge', 'mock-judge-2'], rubric: 'Is the answer the right option?', retryOnHardFail: 1 };
    await e.service.scoreRun({ runId: 'rjudged', scorers: { scorers: [judged] } });
    await e.scoring.finish('rjudged');
    const count = (sql: string) => (e.store.db.prepare(sql).get() as { n: number }).n;
    const attempts = count(`SELECT COUNT(*) AS n FROM retry_attempts`);
    expect(attempts).toBeGreaterThan(0);
    // Each attempt has both judges' verdicts; each record too.
    expect(count(`SELECT COUNT(*) AS n FROM attempt_scores`)).toBe(2 * attempts);
    expect(count(`SELECT COUNT(*) AS n FROM scores`)).toBe(2 * 40);
    // A hard fail is any judge's failed verdict: every retried record had one.
    expect(count(`SELECT COUNT(DISTINCT a.seq) AS n FROM retry_attempts a JOIN scores sc ON sc.seq = a.seq AND sc.severity = 2`)).toBe(attempts);
    const status = await e.service.scoringStatus({ runId: 'rjudged' });
    expect(status.judgeUsage.map((u) => [u.model, u.calls])).toEqual([
      ['mock-judge', 40 + attempts],
      ['mock-judge-2', 40 + attempts],
    ]);
    expect(status.retryUsage.map((u) => [u.model, u.calls])).toEqual([['mock-weak', attempts]]);
  });

  it('scoring again after a record failed to score poses no stored retry again', async () => {
    const dataDir = join(tmp.dir, 'data');
    writeStoredRun(dataDir, { runId: 'ragain', vignettes: 30, epochs: 1, models: [{ model: 'mock-weak', accuracy: 0.6 }] });
    const e = (tmp.open({ dataDir, tickMs: 20 }));
    // The first record cannot be scored: scoring the run again steps back to it and scores every later record again.
    const code = "function score(i) { if (i.vignetteId === 'v0') throw new Error('not this one'); return i.response === i.target; }";
    const config = { scorers: [{ name: 'picky', type: 'code' as const, code, retryOnHardFail: 2 }] };
    const calls = async () => (await e.service.metrics({ profile: 'default', since: 0 })).providers.reduce((n, p) => n + p.calls + p.cacheHits, 0);
    const attempts = () => e.store.db.prepare(`SELECT seq, attempt, response FROM retry_attempts ORDER BY seq, attempt`).all();
    await e.service.scoreRun({ runId: 'ragain', scorers: config });
    await e.scoring.finish('ragain');
    const stored = attempts();
    const made = await calls();
    expect(stored.length).toBeGreaterThan(0);
    expect(made).toBe(stored.length);
    const again = await e.service.scoreRun({ runId: 'ragain', scorers: config });
    expect(again.scorers[0]).toMatchObject({ done: 29, failed: 0, pending: 1 });
    await e.scoring.finish('ragain');
    expect((await e.service.scoringStatus({ runId: 'ragain' })).scorers[0]!.failed).toBe(1);
    expect(attempts()).toEqual(stored);
    expect(await calls()).toBe(made);
  });

  it('refuses retryOnHardFail that is not a whole number from 1 to 5, naming the field', async () => {
    for (const bad of [0, 6, 1.5, 'x']) {
      const parsed = ScoringConfigSchema.safeParse({ scorers: [{ name: 'ok', type: 'match' }, { name: 'exact', type: 'match', retryOnHardFail: bad }] });
      expect(parsed.success).toBe(false);
      expect(parsed.error!.issues.map((i) => i.path.join('.'))).toEqual(['scorers.1.retryOnHardFail']);
    }
    const e = (tmp.open({ tickMs: 20 }));
    writeStoredRun(join(tmp.dir, 'data'), { runId: 'rbad', vignettes: 2, epochs: 1, models: [{ model: 'mock-weak', accuracy: 0.6 }] });
    await expect(
      e.service.scoreRun({ runId: 'rbad', scorers: { scorers: [{ name: 'exact', type: 'match', retryOnHardFail: 6 }] } }),
    ).rejects.toMatchObject({ code: 'invalid_input', message: expect.stringContaining('scorers.0.retryOnHardFail') as unknown });
    expect((await e.service.scoringStatus({ runId: 'rbad' })).scorers).toEqual([]);
    // Every scorer type takes it, and it is part of the version.
    const judge = ScoringConfigSchema.parse({ scorers: [{ name: 'j', type: 'judge', judges: ['mock-judge'], rubric: 'right?', retryOnHardFail: 5 }] });
    expect(judge.scorers[0]).toMatchObject({ retryOnHardFail: 5 });
    expect(scorerVersion({ name: 'exact', type: 'match', retryOnHardFail: 2 })).not.toBe(scorerVersion({ name: 'exact', type: 'match' }));
  });
});
