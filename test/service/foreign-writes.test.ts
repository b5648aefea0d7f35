/**
 * Another process's runs reach this engine's subscribers live: a second engine on the same data
 * folder (its own connection, as a `panoptes run` would have) creates and finishes a run, and the
 * first engine, which never touched it, pushes its events — the run appearing, its jobs moving, its
 * end. Nothing is polled while no one listens, and our own writes do not wake the watcher.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
