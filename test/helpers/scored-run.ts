/**
 * A finished, scored run for the tests that read one: a real engine on a temp folder, a target
 * manifest (writeTargetManifest) posed to mock-strong and mock-weak, run to its end and every score
 * landed, before the file's (or block's) tests; the engine closed and the folder removed after.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { CreateRunInput } from '../../core/service/contract.js';
import { openEngine, type Engine } from '../../core/service/engine.js';
import { tempDir, writeTargetManifest } from './temp.js';

export interface ScoredRunRequest {
  vignettes: number;
  epochs: number;
  scorers: NonNullable<CreateRunInput['scorers']>;
  /** mock-strong and mock-weak unless told otherwise. */
  models?: string[];
}

export interface ScoredRun {
  engine: Engine;
  runId: string;
  /** The temp folder (the manifest is here, the engine's data in `data/`). */
  dir: string;
}

/** Registers the set-up and tear-down; `set` is handed the run before the tests begin. */
export function useScoredRun(request: ScoredRunRequest, set: (run: ScoredRun) => void): void {
  let tmp: ReturnType<typeof tempDir> | undefined;
  let engine: Engine | undefined;
  beforeAll(async () => {
    tmp = tempDir();
    engine = openEngine({ dataDir: join(tmp.dir, 'data'), tickMs: 20 });
    engine.scoring.start();
    const run = await engine.service.createRun({
      manifestPath: writeTargetManifest(tmp.dir, request.vignettes),
      models: request.models ?? ['mock-strong', 'mock-weak'],
      epochs: request.epochs,
      scorers: request.scorers,
    });
    expect(await engine.scheduler.runToCompletion(run.id)).toMatchObject({ status: 'done' });
    await engine.scoring.finish(run.id);
    set({ engine, runId: run.id, dir: tmp.dir });
  });
  afterAll(async () => {
    await engine?.close();
    tmp?.cleanup();
  });
}
