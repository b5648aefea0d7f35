/**
 * A run's states stay in order through retry and takeover (its restart count moves on), a judge
 * no host can call is refused when a run or a scoring is created, naming the field and why, and a
 * scorer that fails later keeps its reason for the status, the report and the command line.
 * Runs on: Node (tests).
 */
import { describe, expect, it } from 'vitest';
import { formatScoreReport } from '../../core/scoring/format-report.js';
import { useTempEngines } from '../helpers/temp-engine.js';
import { writeManifest, writeTargetManifest } from '../helpers/temp.js';

const engines = useTempEngines('panoptes-live-');

const THROWS = `function score(i) { if (i.vignetteId === 'q3') throw new Error('no verdict for q3'); return 1; }`;

describe('a run through retry and takeover', () => {
  it('counts a restart on every retry in place and every hand-back, so a later snapshot sorts after an ended one', async () => {
    const e = engines.open({ tickMs: 20 });
    const run = await e.service.createRun({ manifestPath: writeManifest(engines.dir, 20), models: ['mock-slow'], epochs: 2, concurrency: 1 });
    expect(run.restarts).toBe(0);
    e.scheduler.start();
    await expect.poll(async () => (await e.service.getRun({ runId: run.id })).run.calls, { timeout: 20_000, interval: 20 }).toBeGreaterThan(0);
    await e.service.cancelRun({ runId: run.id });
    const retried = await e.service.retryRun({ runId: run.id, scope: 'failed' });
    expect(retried).toMatchObject({ status: 'queued', restarts: 1 });
    await expect.poll(() => e.store.queries.getRun(run.id)?.status, { timeout: 30_000, interval: 50 }).toBe('done');
    expect(e.store.queries.getRun(run.id)).toMatchObject({ status: 'done', restarts: 1 });
  });

  it('counts a hand-back to the queue (a stopping owner, a takeover) as a restart', async () => {
    const e = engines.open();
    const run = await e.service.createRun({ manifestPath: writeManifest(engines.dir, 4), models: ['mock-fast'], epochs: 1 });
    const claimed = e.store.runs.claimNextRun('owner-a', 60_000);
    expect(claimed?.id).toBe(run.id);
    expect(e.store.runs.releaseRun(run.id, 'owner-a')).toBe(true);
    expect(e.store.queries.getRun(run.id)).toMatchObject({ status: 'queued', restarts: 1 });
  });
});

describe('Run again', () => {
  it("keeps the run's name and the newest version of each of its scorers", async () => {
    const e = engines.open({ tickMs: 20 });
    const manifest = writeTargetManifest(engines.dir, 4);
    const run = await e.service.createRun({
      manifestPath: manifest,
      models: ['mock-fast'],
      epochs: 1,
      name: 'nightly',
      scorers: { scorers: [{ name: 'exact', type: 'match' }] },
    });
    await e.runToEnd(run.id);
    await e.service.scoreRun({ runId: run.id, scorers: { scorers: [{ name: 'exact', type: 'match', severity: 'soft' }, { name: 'brief', type: 'words', max: 60 }] } });
    const again = await e.service.retryRun({ runId: run.id, scope: 'all' });
    expect(again.id).not.toBe(run.id);
    expect(again.name).toBe('nightly');
    const attached = (await e.service.scoringStatus({ runId: again.id })).scorers;
    expect(attached.map((s) => s.name)).toEqual(['exact', 'brief']);
    const before = (await e.service.scoringStatus({ runId: run.id })).scorers;
    expect(attached[0]!.version).toBe(before.find((s) => s.name === 'exact' && s.version !== before[0]!.version)!.version);
  });
});

describe('judges checked when the scoring is created', () => {
  const judged = (judge: string) => ({ scorers: [{ name: 'graded', type: 'judge' as const, judges: [judge], rubric: 'Is it right?' }] });

  it('refuses a run whose judge has no host with its API key, naming the field and the key', async () => {
    const e = engines.open({ router: { env: {} } });
    const manifest = writeTargetManifest(engines.dir, 3);
    // Privacy off: every host of the judge counts, each with its own key.
    await expect(e.service.createRun({ manifestPath: manifest, models: ['mock-fast'], epochs: 1, privacy: 'off', scorers: judged('gpt-4o-mini') })).rejects.toMatchObject({
      where: 'scorers.0.judges.0',
      // Every host's key is named (the hosted catalog's free-tier hosts come after these two).
      message: expect.stringMatching(/^scorers\.0\.judges\.0: judge "gpt-4o-mini" has no host it can call: OPENAI_API_KEY is not set; OPENROUTER_API_KEY is not set/) as unknown,
    });
    expect(await e.service.listRuns()).toEqual([]);
  });

  it('refuses such a judge when a stored run is scored, attaching nothing', async () => {
    const e = engines.open({ router: { env: {} }, tickMs: 20 });
    const run = await e.service.createRun({ manifestPath: writeTargetManifest(engines.dir, 3), models: ['mock-fast'], epochs: 1, privacy: 'off' });
    await e.scheduler.runToCompletion(run.id);
    await expect(e.service.scoreRun({ runId: run.id, scorers: judged('gpt-4o-mini') })).rejects.toThrow(
      'scorers.0.judges.0: judge "gpt-4o-mini" has no host it can call: OPENAI_API_KEY is not set',
    );
    expect((await e.service.scoringStatus({ runId: run.id })).scorers).toEqual([]);
  });

  it('accepts a mock judge (no key needed)', async () => {
    const e = engines.open({ router: { env: {} } });
    await expect(
      e.service.createRun({ manifestPath: writeTargetManifest(engines.dir, 3), models: ['mock-fast'], epochs: 1, scorers: judged('mock-judge') }),
    ).resolves.toMatchObject({ status: 'queued' });
  });
});

describe('a scorer that fails later', () => {
  it('keeps its last reason in the status and the report, and scoring again clears it', async () => {
    const e = engines.open({ tickMs: 20 });
    const run = await e.service.createRun({
      manifestPath: writeTargetManifest(engines.dir, 6),
      models: ['mock-fast'],
      epochs: 2,
      scorers: { scorers: [{ name: 'picky', type: 'code', code: THROWS }] },
    });
    await e.runToEnd(run.id);
    const status = await e.service.scoringStatus({ runId: run.id });
    expect(status.scorers.map((s) => [s.name, s.done, s.failed, s.lastError])).toEqual([['picky', 10, 2, 'Error: no verdict for q3']]);
    const report = await e.service.report({ runId: run.id });
    // One count of what was not scored (the older `failed` / `failure` still read the same).
    expect(report).toMatchObject({ not_scored: 2, not_scored_reason: 'Error: no verdict for q3', failed: 2, failure: 'Error: no verdict for q3' });
    expect(report.models.map((m) => m.not_scored)).toEqual([2]);
    const text = formatScoreReport(report);
    expect(text).toContain('Warning: mock-fast: 2 responses (16.7 %) not scored (a judge failed or gave no verdict, or the record could not be scored): left out as missing, not counted as fails.');
    expect(text).toContain('Warning: Last reason a record could not be scored: Error: no verdict for q3 (scoring the run again retries those records).');
    expect(text).not.toContain('could not be scored, left out of every figure');
    // A scorer that scores everything has no reason to show.
    await e.service.scoreRun({ runId: run.id, scorers: { scorers: [{ name: 'easy', type: 'code', code: 'function score() { return 1; }' }] } });
    await e.scoring.finish(run.id);
    const easy = (await e.service.scoringStatus({ runId: run.id })).scorers.find((s) => s.name === 'easy');
    expect(easy).toMatchObject({ failed: 0, lastError: null });
  });
});
