/**
 * The benchmark table in docs/contributing/benchmarks.md is what bench/results/*.json say: the
 * script that writes it finds nothing to change, and does find a table edited by hand.
 * Runs on: Node (tests).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';

const PAGE = 'docs/contributing/benchmarks.md';

function check(page: string) {
  return spawnSync(process.execPath, ['scripts/bench-table.mjs', '--check', page], { encoding: 'utf8', timeout: 30_000 });
}

describe('the benchmark table', () => {
  it('matches the committed JSON results', () => {
    const res = check(PAGE);
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
  });

  it('is refused when edited by hand', () => {
    const page = readFileSync(PAGE, 'utf8');
    const row = /^\| `[a-z-]+` \| `[^`]+` \| ([^|]+) \|/m.exec(page);
    expect(row).not.toBeNull();
    const tmp = tempDir();
    try {
      const edited = join(tmp.dir, 'benchmarks.md');
      writeFileSync(edited, page.replace(row![0], row![0].replace(row![1]!, '99999 ')));
      const res = check(edited);
      expect(res.status).toBe(1);
      expect(res.stderr).toMatch(/the benchmark table differs from bench\/results\//);
    } finally {
      tmp.cleanup();
    }
  });
});
