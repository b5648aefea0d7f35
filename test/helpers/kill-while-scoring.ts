/**
 * For the durable-scoring tests: how many scores a data folder's database holds (read from another
 * process's file while it writes), and a SIGKILL for a `panoptes score` or `resume` child once some
 * scores, but not all, have landed.
 * Runs on: Node (tests).
 */
import { existsSync } from 'node:fs';
import { Store } from '../../core/store/store.js';
import type { startCli } from './cli.js';

export function scoreCount(dbPath: string): number {
  if (!existsSync(dbPath)) return 0; // the child has not made its database yet
  const store = new Store(dbPath, { readonly: true });
  try {
    return (store.db.prepare(`SELECT COUNT(*) AS n FROM scores`).get() as { n: number }).n;
  } catch (err) {
    // The child has not made the scoring tables yet: nothing is stored. Anything else is a real failure.
    if (err instanceof Error && /no such table: scores/.test(err.message)) return 0;
    throw err;
  } finally {
    store.close();
  }
}

/** Kills the child with SIGKILL once some scores (but not all `total`) are stored; false if it finished first. */
export async function killWhileScoring(cli: ReturnType<typeof startCli>, dbPath: string, total: number): Promise<boolean> {
  for (;;) {
    const n = scoreCount(dbPath);
    if (n > 0 && n < total) {
      cli.child.kill('SIGKILL');
      return (await cli.done).signal === 'SIGKILL';
    }
    if (cli.child.exitCode !== null || n >= total) {
      await cli.done;
      return false;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}
