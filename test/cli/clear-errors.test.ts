/**
 * Clear errors from the real `panoptes` command, each one line naming the file, line or folder,
 * never a stack trace: a manifest line nested 20,000 deep; a read-only data folder (the reading
 * commands open the database read-only and work, a writing one names the folder); a corrupt
 * database; an empty file, a text file or another program's SQLite database where the database
 * should be (refused with its path, left as it was); while a missing database is still created.
 * Read-only is real: as root, which no file mode stops, the folder is seen through a read-only bind
 * mount (or, where mounting is not allowed, the commands run as `nobody` over its modes taken away).
 * Runs on: Node (tests).
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCli, type CliResult } from '../helpers/cli.js';
import { tempDir, writeManifest, writeMockCatalog } from '../helpers/temp.js';

const NOBODY = 65534;

/** One line on stderr, starting `panoptes: `, with no stack frame. */
function expectOneLine(res: CliResult, pattern: RegExp): void {
  const lines = res.stderr.trimEnd().split('\n');
  expect(lines, res.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^panoptes: /);
  expect(lines[0]).toMatch(pattern);
}

/** The command as `nobody`, whom file modes do stop (when the tests run as root). */
function runAsNobody(args: string[]): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, PANOPTES_LOG: 'warn', HOME: '/tmp' },
    ...(process.getuid?.() === 0 ? { uid: NOBODY, gid: NOBODY } : {}),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((res) => child.on('close', (code, signal) => res({ code, signal, stdout, stderr })));
}

describe('clear errors from the command line', () => {
  let tmp: ReturnType<typeof tempDir>;
  let catalog: string;
  let manifest: string;
  beforeAll(() => {
    tmp = tempDir();
    catalog = writeMockCatalog(tmp.dir, { a: {} });
    manifest = writeManifest(tmp.dir, 3);
  });
  afterAll(() => {
    chmodAll(tmp.dir, 0o755, 0o644);
    tmp.cleanup();
  });

  it('names the manifest line nested 20,000 deep, in one line', async () => {
    const deep = join(tmp.dir, 'deep.jsonl');
    writeFileSync(deep, `{"id":"a","prompt":"A?"}\n{"id":"d","prompt":"p","metadata":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}\n`);
    const res = await runCli(['run', '--manifest', deep, '--models', 'a', '--data-dir', join(tmp.dir, 'deep-data'), '--catalog', catalog]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`${deep}:2: "metadata.a.a.a.a.a..." nests deeper than 64 levels`);
    expect(res.stderr).not.toMatch(/^\s+at /m);
  });

  it('in a read-only data folder, runs, stats and export work; run names the folder', async () => {
    const dataDir = join(tmp.dir, 'ro');
    const made = await runCli(['run', '--manifest', manifest, '--models', 'a', '--epochs', '2', '--json', '--data-dir', dataDir, '--catalog', catalog]);
    expect(made.code, made.stderr).toBe(0);
    const runId = String((JSON.parse(made.stdout) as { run_id: string }).run_id);
    const out = join(tmp.dir, 'out');
    mkdirSync(out);
    chmodSync(out, 0o777);
    chmodSync(tmp.dir, 0o755);
    const before = snapshot(dataDir);
    const view = readOnlyView(dataDir);
    try {
      const runs = await view.run(['runs', '--data-dir', view.dir, '--catalog', catalog]);
      expect(runs.code, runs.stderr).toBe(0);
      expect(runs.stdout).toContain(runId);
      const stats = await view.run(['stats', '--data-dir', view.dir, '--catalog', catalog]);
      expect(stats.code, stats.stderr).toBe(0);
      expect(stats.stdout).toMatch(/\ba\b/);
      const exported = await view.run(['export', runId, '--out', join(out, 'x.jsonl'), '--data-dir', view.dir, '--catalog', catalog]);
      expect(exported.code, exported.stderr).toBe(0);
      expect(readFileSync(join(out, 'x.jsonl'), 'utf8').trimEnd().split('\n')).toHaveLength(6);

      const run = await view.run(['run', '--manifest', manifest, '--models', 'a', '--data-dir', view.dir, '--catalog', catalog]);
      expect(run.code).toBe(2);
      expectOneLine(run, new RegExp(`the data folder ${view.dir} is read-only \\((EACCES|EROFS)\\); this command writes to it`));
    } finally {
      view.undo();
    }
    expect(snapshot(dataDir)).toEqual(before);
  });

  it('names a corrupt database file in one line', async () => {
    const dataDir = join(tmp.dir, 'corrupt');
    const made = await runCli(['run', '--manifest', manifest, '--models', 'a', '--data-dir', dataDir, '--catalog', catalog]);
    expect(made.code, made.stderr).toBe(0);
    const db = join(dataDir, 'panoptes.db');
    // Page 1 past the 100-byte header holds the schema: garbage there is a malformed database.
    const fd = openSync(db, 'r+');
    writeSync(fd, Buffer.alloc(3000, 0xa5), 0, 3000, 100);
    closeSync(fd);
    for (const args of [['runs'], ['run', '--manifest', manifest, '--models', 'a']]) {
      const res = await runCli([...args, '--data-dir', dataDir, '--catalog', catalog]);
      expect(res.code).toBe(2);
      expectOneLine(res, new RegExp(`${db} is corrupt \\(`));
    }
  });

  it('refuses an empty file, a text file and a foreign SQLite database where the database should be, leaving each as it was', async () => {
    const cases: Array<[string, (path: string) => void, RegExp]> = [
      ['empty', (p) => writeFileSync(p, ''), /is an empty file \(0 bytes\), not a Panoptes database/],
      ['text', (p) => writeFileSync(p, 'my notes, not a database\n'), /is not a SQLite file, not a Panoptes database/],
      ['foreign', (p) => new Database(p).exec('CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES (\'x\')').close(), /is another program's SQLite database/],
    ];
    for (const [name, make, pattern] of cases) {
      const dataDir = join(tmp.dir, `db-${name}`);
      mkdirSync(dataDir);
      const db = join(dataDir, 'panoptes.db');
      make(db);
      const bytes = readFileSync(db);
      for (const args of [['runs'], ['run', '--manifest', manifest, '--models', 'a']]) {
        const res = await runCli([...args, '--data-dir', dataDir, '--catalog', catalog]);
        expect(res.code, `${name} ${args[0]}`).toBe(2);
        expectOneLine(res, new RegExp(`${db} ${pattern.source}`));
      }
      expect(readFileSync(db).equals(bytes)).toBe(true);
    }
  });

  it('still creates a missing database', async () => {
    const dataDir = join(tmp.dir, 'fresh');
    const res = await runCli(['runs', '--data-dir', dataDir, '--catalog', catalog]);
    expect(res.code, res.stderr).toBe(0);
    expect(statSync(join(dataDir, 'panoptes.db')).size).toBeGreaterThan(0);
  });
});

/**
 * The data folder made read-only for the commands: as root, a read-only bind mount of it (root
 * ignores file modes, not a read-only mount); otherwise, or where mounting is not allowed, its modes
 * taken away and the commands run as `nobody`. `dir` is where the commands find it.
 */
function readOnlyView(dataDir: string): { dir: string; run: (args: string[]) => Promise<CliResult>; undo: () => void } {
  if (process.getuid?.() === 0) {
    const view = `${dataDir}-ro`;
    mkdirSync(view);
    try {
      execFileSync('mount', ['--bind', dataDir, view], { stdio: 'ignore' });
      execFileSync('mount', ['-o', 'remount,bind,ro', view], { stdio: 'ignore' });
      return { dir: view, run: (args) => runCli(args), undo: () => execFileSync('umount', [view]) };
    } catch {
      try {
        execFileSync('umount', [view], { stdio: 'ignore' });
      } catch {
        // never mounted
      }
    }
  }
  chmodAll(dataDir, 0o555, 0o444);
  return { dir: dataDir, run: runAsNobody, undo: () => chmodAll(dataDir, 0o755, 0o644) };
}

/** Sets every folder's and file's mode under `dir` (and its own). */
function chmodAll(dir: string, dirMode: number, fileMode: number): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) chmodAll(p, dirMode, fileMode);
    else chmodSync(p, fileMode);
  }
  chmodSync(dir, dirMode);
}

/** Every file under `dir` with its bytes, to show nothing changed. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else out[p] = readFileSync(p).toString('base64');
    }
  };
  walk(dir);
  return out;
}

