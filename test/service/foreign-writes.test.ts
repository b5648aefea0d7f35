/**
 * Another process's runs reach this engine's subscribers live: a second engine on the same data
 * folder (its own connection, as a `panoptes run` would have) creates and finishes a run, and the
 * first engine, which never touched it, pushes its events — the run appearing, its jobs moving, its
 * end; its scoring; a change to a run far down the list; a removal. Nothing is polled while no one
 * listens, and our own writes do not wake the watcher. The change sequence behind it is checked
 * at the store: written with the change, never numbered backwards, one row per thing it tracks.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunId } from '../../core/domain.js';
import type { ControlEvent, RunEvent } from '../../core/service/contract.js';
import { openEngine, type Engine } from '../../core/service/engine.js';
import { tempDir, writeManifest } from '../helpers/temp.js';

describe('runs written by another process', () => {
  let tmp: ReturnType<typeof tempDir>;
  let app: Engine;
  let other: Engine;
  beforeEach(() => {
    tmp = tempDir();
    app = openEngine({ dataDir: join(tmp.dir, 'data') });
    other = openEngine({ dataDir: join(tmp.dir, 'data') });
  });
  afterEach(async () => {
    await other.close();
    await app.close();
    tmp.cleanup();
  });

  it('appear live in an engine that did not write them, jobs and end included', async () => {
    const seen: ControlEvent[] = [];
    const off = app.service.subscribe((e) => seen.push(e));
    const run = await other.service.createRun({ manifestPath: writeManifest(tmp.dir, 5), models: ['mock-fast', 'mock-slow'], epochs: 2 });
    const final = await other.scheduler.runToCompletion(run.id);
    expect(final.status).toBe('done');

    const ofRun = () => seen.filter((e): e is RunEvent => e.type === 'run' && e.run.id === run.id);
    await expect.poll(() => ofRun().at(-1)?.run.status, { timeout: 10_000, interval: 50 }).toBe('done');
    const last = ofRun().at(-1)!;
    expect(last.run.calls).toBe(20);
    expect(last.usage.map((u) => u.calls)).toEqual([10, 10]);
    // Every job was reported done at some point.
    const doneJobs = new Set(ofRun().flatMap((e) => e.jobs.filter((j) => j.status === 'done').map((j) => j.id)));
    expect(doneJobs.size).toBe(4);
    off();
  });

  it("another process's scoring, a change to an old run and a removal reach us too", async () => {
    // Three runs finished before we listen; the oldest is the one changed later.
    const runs: RunId[] = [];
    for (let i = 0; i < 3; i++) {
      const run = await other.service.createRun({ manifestPath: writeManifest(tmp.dir, 4), models: ['mock-fast'], epochs: 1 });
      await other.scheduler.runToCompletion(run.id);
      runs.push(run.id);
    }
    const seen: ControlEvent[] = [];
    const off = app.service.subscribe((e) => seen.push(e));
    const [oldest, middle] = runs as [RunId, RunId];

    await other.service.scoreRun({ runId: oldest, scorers: { scorers: [{ name: 'exact', type: 'match' }] } });
    await other.scoring.finish(oldest);
    await expect
      .poll(() => seen.some((e) => e.type === 'scoring' && e.status.runId === oldest && e.status.scorers.some((s) => s.done === 4)), {
        timeout: 10_000,
        interval: 50,
      })
      .toBe(true);

    await other.service.describeRun({ runId: oldest, name: 'renamed elsewhere' });
    await expect
      .poll(() => seen.some((e) => e.type === 'run' && e.run.id === oldest && e.run.name === 'renamed elsewhere'), { timeout: 10_000, interval: 50 })
      .toBe(true);

    const before = app.store.queries.lastChange();
    await other.service.deleteRun({ runId: middle });
    await expect.poll(() => app.store.queries.lastChange(), { timeout: 10_000, interval: 50 }).toBeGreaterThan(before);
    off();
  });

  it('the change sequence is written with the change, numbered upwards through removals, one row per thing', async () => {
    const seqs = () => app.store.queries.changesSince(0, 10_000);
    const run = await app.service.createRun({ manifestPath: writeManifest(tmp.dir, 6), models: ['mock-fast', 'mock-slow'], epochs: 2 });
    const afterCreate = app.store.queries.lastChange();
    expect(seqs().filter((c) => c.runId === run.id).map((c) => c.kind)).toEqual(['run']);
    await app.scheduler.runToCompletion(run.id);
    const rows = seqs().filter((c) => c.runId === run.id);
    // One row for the run and one per job (4), however many times each changed.
    expect(rows.filter((c) => c.kind === 'run')).toHaveLength(1);
    expect(new Set(rows.filter((c) => c.kind === 'job').map((c) => c.jobId)).size).toBe(4);
    expect(rows.filter((c) => c.kind === 'job')).toHaveLength(4);
    expect(app.store.queries.lastChange()).toBeGreaterThan(afterCreate);
    // Numbers are distinct and upward in read order.
    const all = seqs().map((c) => c.seq);
    expect([...all].sort((a, b) => a - b)).toEqual(all);

    const top = app.store.queries.lastChange();
    await app.service.deleteRun({ runId: run.id });
    // The removed run keeps one row, numbered above everything before; its jobs' rows are gone.
    const left = seqs().filter((c) => c.runId === run.id);
    expect(left).toEqual([{ kind: 'run', runId: run.id, jobId: 0, seq: top + 1 }]);
    expect(app.store.queries.lastChange()).toBe(top + 1);
    // Paged reads: a limit returns the oldest first, and the rest follows from the last number read.
    const first = app.store.queries.changesSince(0, 1);
    expect(first).toHaveLength(1);
    expect(app.store.queries.changesSince(first[0]!.seq, 10_000).length).toBe(seqs().length - 1);
  });

  it('reads nothing while no one listens, and our own writes do not count as foreign', async () => {
    const run = await app.service.createRun({ manifestPath: writeManifest(tmp.dir, 3), models: ['mock-fast'], epochs: 1 });
    await app.scheduler.runToCompletion(run.id);
    const seen: ControlEvent[] = [];
    const off = app.service.subscribe((e) => seen.push(e));
    await new Promise((r) => setTimeout(r, 600));
    // Our own run finished before anyone listened: no foreign change to report.
    expect(seen.filter((e) => e.type === 'run')).toEqual([]);
    off();
  });
});
