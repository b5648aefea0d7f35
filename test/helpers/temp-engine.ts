/**
 * A real engine on a temp folder, for a test: each test gets a fresh folder, and every engine it
 * opened is closed and the folder removed after it, whether the test passed or threw.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { openEngine, type Engine, type EngineOptions } from '../../core/service/engine.js';
import { tempDir } from './temp.js';

export interface TempEngines {
  /** This test's own folder: manifests and catalogs go here, the engine's data in `data/` unless told otherwise. */
  readonly dir: string;
  /** Opens an engine (its data in `<dir>/data` unless `dataDir` is given), closed after the test. */
  open(opts?: Partial<EngineOptions>): Engine;
}

/** Registers the per-test set-up and tear-down; call it in a `describe` block or at the top of a file. */
export function useTempEngines(prefix?: string): TempEngines {
  let tmp: ReturnType<typeof tempDir> | undefined;
  const opened: Engine[] = [];
  beforeEach(() => {
    tmp = tempDir(prefix);
  });
  afterEach(async () => {
    for (const engine of opened.splice(0).reverse()) await engine.close();
    tmp?.cleanup();
    tmp = undefined;
  });
  const dir = (): string => {
    if (tmp === undefined) throw new Error('useTempEngines: the folder exists only while a test runs');
    return tmp.dir;
  };
  return {
    get dir() {
      return dir();
    },
    open(opts = {}) {
      const engine = openEngine({ dataDir: join(dir(), 'data'), ...opts });
      opened.push(engine);
      return engine;
    },
  };
}
