/**
 * For the kill -9 tests of billed calls: a CLI child started, SIGKILLed a seeded pause after
 * something it writes is first seen (a count read from its database), and what a test reads of
 * that database meanwhile (0 before the child has made and migrated it), and the catalog of the
 * two counting servers they run against.
 * Runs on: Node (tests).
 */
import { existsSync, statSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../core/store/migrations.js';
import { startCli } from './cli.js';

/**
 * The number `sql` reads (as `n`) from the database at `dbPath`; 0 before the child has made the
 * database and migrated it to the current schema (it may be polled mid-migration). Any other error
 * is thrown: a count that read 0 for a broken query would let a kill test pass seeing nothing.
 */
export function readCount(dbPath: string, sql: string): number {
  if (!existsSync(dbPath) || statSync(dbPath).size === 0) return 0;
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 1000');
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version < MIGRATIONS.length) return 0;
    return (db.prepare(sql).get() as { n: number | null }).n ?? 0;
  } finally {
    db.close();
  }
}

/** Starts `args`, waits until `seen` counts something, then SIGKILLs it after `pauseMs`; false if it ended first. */
export async function killAtSeededPoint(args: string[], seen: () => number, pauseMs: number): Promise<boolean> {
  const cli = startCli(args);
  const bound = setTimeout(() => cli.child.kill('SIGKILL'), 60_000);
  try {
    while (seen() === 0 && cli.child.exitCode === null) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, pauseMs));
    if (cli.child.exitCode !== null) return false;
    cli.child.kill('SIGKILL');
    return (await cli.done).signal === 'SIGKILL';
  } finally {
    clearTimeout(bound);
    await cli.done;
  }
}

/**
 * The catalog of those tests: a candidate model `cand` and a judge model `fj`, each on a provider
 * of its own (two counting local servers, so each side's requests are counted apart), priced.
 */
export function writeCountedCatalog(file: string, candidatePort: number, judgePort: number): string {
  const host = (provider: string, model: string) => ({ hosts: [{ provider, model, contextWindow: 8192, inputPerMTok: 1, outputPerMTok: 2 }] });
  writeFileSync(
    file,
    JSON.stringify({
      providers: {
        cands: { kind: 'openai', baseUrl: `http://127.0.0.1:${candidatePort}/v1`, trainsOnData: false, timeoutMs: 10_000 },
        judges: { kind: 'openai', baseUrl: `http://127.0.0.1:${judgePort}/v1`, trainsOnData: false, timeoutMs: 10_000 },
      },
      models: { cand: host('cands', 'c'), fj: host('judges', 'j') },
    }),
  );
  return file;
}
