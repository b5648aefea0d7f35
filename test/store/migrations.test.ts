/**
 * The schema as migrations build it: a new database and one migrated from every earlier version
 * end with the same tables, indexes and SQL as the committed snapshot of `sqlite_master`
 * (fixtures/schema.json, taken before the migrations moved into one file each), so a database
 * made by an earlier build opens and migrates as it always did.
 * Runs on: Node (tests).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../core/store/migrations.js';
import { Store } from '../../core/store/store.js';
import { tempDir } from '../helpers/temp.js';

interface SchemaSnapshot {
  userVersion: number;
  objects: Array<{ type: string; name: string; tbl_name: string; sql: string | null }>;
}

/** Read once: the stepwise cases compare with what a new database gets. */
const SNAPSHOT = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'schema.json'), 'utf8')) as SchemaSnapshot;

/** The schema of the database at `path`, read over a connection of its own. */
function schemaOf(path: string): SchemaSnapshot {
  const db = new Database(path, { readonly: true });
  try {
    return {
      userVersion: db.pragma('user_version', { simple: true }) as number,
      objects: db.prepare(`SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name`).all() as SchemaSnapshot['objects'],
    };
  } finally {
    db.close();
  }
}

describe('migrations', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(() => tmp.cleanup());

  it('are numbered 1, 2, 3... in list order, each in the file that bears its number', () => {
    const files = readdirSync(join(import.meta.dirname, '../../core/store/migrations')).filter((f) => /^\d{3}-.+\.ts$/.test(f)).sort();
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
    expect(files.map((f) => Number(f.slice(0, 3)))).toEqual(MIGRATIONS.map((m) => m.version));
  });

  // A new migration changes the snapshot on purpose: `-u` rewrites it, and its diff is reviewed with the migration.
  it('build a new database whose schema is the snapshot', async () => {
    const path = join(tmp.dir, 'new.db');
    new Store(path).close();
    await expect(JSON.stringify(schemaOf(path), null, 2) + '\n').toMatchFileSnapshot('fixtures/schema.json');
  });

  it.each(MIGRATIONS.slice(0, -1).map((m) => m.version))('take a database left at version %i to the snapshot', (version) => {
    const path = join(tmp.dir, `v${version}.db`);
    const old = new Database(path);
    for (const m of MIGRATIONS.slice(0, version)) {
      old.exec(m.up);
      old.pragma(`user_version = ${m.version}`);
    }
    old.close();
    new Store(path).close();
    expect(schemaOf(path)).toEqual(SNAPSHOT);
  });
});
