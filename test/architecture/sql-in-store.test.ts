/**
 * Only core/store/ speaks SQL: no other source prepares a statement, sets a pragma, or reaches for
 * the store's connection (`store.db`); they go through a room of the Store. dependency-cruiser's
 * `sql-only-in-the-store` rule keeps better-sqlite3 itself inside core/store/; this test catches
 * the connection passed out through the Store's face.
 * Runs on: Node (tests).
 */
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const SOURCES = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'core', 'electron', 'renderer/src'], {
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => /\.(ts|tsx|cts)$/.test(f) && !f.startsWith('core/store/'));

/** A use of a SQLite connection: `x.db` (not the file name `panoptes.db`), or a statement or pragma call. */
const SQL_USE = /\.db\b(?!['"`])|\.prepare(<[^>]*>)?\(|\.pragma\(/;

describe('SQL lives in core/store/', () => {
  it('finds the sources', () => {
    expect(SOURCES.length).toBeGreaterThan(100);
  });

  it.each(SOURCES)('%s uses no SQLite connection', (file) => {
    const lines = readFileSync(file, 'utf8').split('\n');
    const uses = lines.flatMap((line, i) => (SQL_USE.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
    expect(uses).toEqual([]);
  });
});
