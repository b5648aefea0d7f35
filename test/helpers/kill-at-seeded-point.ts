/**
 * For the kill -9 tests of billed calls: a CLI child started, SIGKILLed a seeded pause after
 * something it writes is first seen (a count read from its database), and what a test reads of
 * that database meanwhile (0 before the child has made and migrated it); the two counting servers
 * they run against (a candidate and a judge, real child processes), their catalog, and the
 * manifest of plain questions they pose.
 * Runs on: Node (tests).
 */
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll } from 'vitest';
import { MIGRATIONS } from '../../core/store/migrations.js';
import { startOpenAIServer, type ServerProcess } from '../outages/openai-server.js';
import { startCli } from './cli.js';
import { tempDir } from './temp.js';

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

/** A kill test's temp folder and its two counting servers, each answering after 15 ms. */
export interface CountedProviders {
  readonly dir: string;
  /** Answers the candidate model `cand`, counting every request it receives. */
  readonly candidate: ServerProcess;
  /** Answers the judge model `fj`, counting every request it receives. */
  readonly judge: ServerProcess;
  /** The catalog of the two (writeCountedCatalog), in the temp folder. */
  catalog(): string;
}

/** Starts the folder and both servers before the file's tests, and ends them after. */
export function useCountedProviders(): CountedProviders {
  let tmp: ReturnType<typeof tempDir> | undefined;
  let servers: [ServerProcess, ServerProcess] | undefined;
  beforeAll(async () => {
    tmp = tempDir();
    servers = await Promise.all([startOpenAIServer({ delayMs: 15 }), startOpenAIServer({ delayMs: 15 })]);
  });
  afterAll(async () => {
    await Promise.all((servers ?? []).map((s) => s.kill()));
    tmp?.cleanup();
  });
  const started = (): { dir: string; candidate: ServerProcess; judge: ServerProcess } => {
    if (tmp === undefined || servers === undefined) throw new Error('the counted providers start in beforeAll: use them inside a test');
    return { dir: tmp.dir, candidate: servers[0], judge: servers[1] };
  };
  return {
    get dir() {
      return started().dir;
    },
    get candidate() {
      return started().candidate;
    },
    get judge() {
      return started().judge;
    },
    catalog() {
      const { dir, candidate, judge } = started();
      return writeCountedCatalog(join(dir, 'catalog.json'), candidate.port, judge.port);
    },
  };
}

/** A manifest of `count` plain questions (`v0`: "Question 0?", ...) at `path`. */
export function writeQuestions(path: string, count: number): string {
  writeFileSync(path, Array.from({ length: count }, (_, i) => JSON.stringify({ id: `v${i}`, prompt: `Question ${i}?` })).join('\n') + '\n');
  return path;
}
